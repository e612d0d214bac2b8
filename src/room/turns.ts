import { stripCode } from './text/code-spans.js';
import type { RoomMessage, TurnState } from './types.js';

/** What an agent's reply means for the room. */
export type ReplyOutcome =
  | { readonly kind: 'pass' }
  /** `text` is the reply without the tag ('' when the tag was all there was). */
  | { readonly kind: 'world-pass'; readonly text: string }
  | { readonly kind: 'message'; readonly text: string };

/** seed: a reply that is exactly `[pass]` posts nothing. */
export const PASS = '[pass]';
const WORLD_PASS = /<world>\s*pass\s*<\/world>/gi;

/** The bridge's line when an agent hands control back (seed 003's wording). */
export function worldPassText(agent: string): string {
  return `@human ${agent} is passing control to you`;
}

/**
 * Classifies a reply: `[pass]`, `<world>pass</world>` (outside code), or a message to post.
 * Refinement of seed 003: a world pass keeps the reply — the text without the tag is posted, then the
 * hand-back line — instead of replacing the whole answer.
 */
export function classifyReply(reply: string): ReplyOutcome {
  const text = reply.trim();
  if (text === '' || text.toLowerCase() === PASS) return { kind: 'pass' };
  if (new RegExp(WORLD_PASS.source, 'i').test(stripCode(text))) {
    const rest = text.replace(WORLD_PASS, '').trim();
    return { kind: 'world-pass', text: rest.toLowerCase() === PASS ? '' : rest };
  }
  return { kind: 'message', text };
}

/**
 * The counter after a message is stored: agents count up, a human resets it and gives control to the
 * agents. The bridge's own lines (errors, notices) change nothing: a failing `always` agent must not
 * keep a loop alive by resetting the count. Hand-backs and operator commands reset it themselves.
 */
export function countMessage(state: TurnState, kind: RoomMessage['kind']): TurnState {
  if (kind === 'agent') return { ...state, consecutive: state.consecutive + 1 };
  if (kind === 'human') return { consecutive: 0, control: 'agents' };
  return state;
}

/** seed: at most TURN_LIMIT consecutive agent messages, then control goes back to the humans. */
export function limitReached(state: TurnState, limit: number): boolean {
  return state.consecutive >= limit;
}

export function handBackText(limit: number): string {
  return `@human ${limit} agent messages in a row: the agents stop here and control is back with you. Mention an agent to continue.`;
}

/** State after control is handed to the humans (turn limit, world pass, /pass). */
export function handBack(reason: string): TurnState {
  return { consecutive: 0, control: 'humans', reason };
}
