/**
 * The spans of the turns under way, by `room#ask`: a turn's posts hang below its span. In memory only and bounded:
 * after a restart a post finds no turn span and hangs below the decision that sent it (same trace).
 */
import { type Context, ROOT_CONTEXT, type SpanContext, trace } from '@opentelemetry/api';

const KEPT = 2000;
// Span contexts only (ids), not the spans: an ended span is not kept alive here after its export.
const turns = new Map<string, SpanContext>();

export function keepTurn(room: string, ask: number, span: SpanContext): void {
  const key = `${room}#${ask}`;
  turns.delete(key);
  turns.set(key, span);
  if (turns.size > KEPT) {
    const oldest = turns.keys().next().value;
    if (oldest !== undefined) turns.delete(oldest);
  }
}

export function turnContext(room: string, ask: number | undefined): Context | undefined {
  const span = ask === undefined ? undefined : turns.get(`${room}#${ask}`);
  return span ? trace.setSpanContext(ROOT_CONTEXT, span) : undefined;
}
