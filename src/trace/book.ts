/**
 * The spans of the turns under way, by `room#ask`: a turn's posts hang below its span. In memory only and bounded:
 * after a restart a post finds no turn span and hangs below the decision that sent it (same trace).
 */
import type { Context } from '@opentelemetry/api';

const KEPT = 2000;
const turns = new Map<string, Context>();

export function keepTurn(room: string, ask: number, context: Context): void {
  const key = `${room}#${ask}`;
  turns.delete(key);
  turns.set(key, context);
  if (turns.size > KEPT) {
    const oldest = turns.keys().next().value;
    if (oldest !== undefined) turns.delete(oldest);
  }
}

export function turnContext(room: string, ask: number | undefined): Context | undefined {
  return ask === undefined ? undefined : turns.get(`${room}#${ask}`);
}
