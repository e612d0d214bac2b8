import { stripCode } from './mentions.js';
import type { AgentProfile, RoomMessage, TurnState } from './types.js';
import { isAwaiting, shouldWake, type WakeInput } from './wake.js';

/** What an agent's reply means for the room. */
export type ReplyOutcome =
  | { readonly kind: 'pass' }
  | { readonly kind: 'world-pass'; readonly text: string }
  | { readonly kind: 'message'; readonly text: string };

/** seed: a reply that is exactly `[pass]` posts nothing. */
export const PASS = '[pass]';
const WORLD_PASS = /<world>\s*pass\s*<\/world>/i;

export function worldPassText(agent: string): string {
  return `@human ${agent} is passing control to you`;
}

/** Classifies a reply: `[pass]`, `<world>pass</world>` (outside code), or a message to post. */
export function classifyReply(agent: string, reply: string): ReplyOutcome {
  const text = reply.trim();
  if (text === '' || text.toLowerCase() === PASS) return { kind: 'pass' };
  if (WORLD_PASS.test(stripCode(text))) return { kind: 'world-pass', text: worldPassText(agent) };
  return { kind: 'message', text };
}

/**
 * Who may answer `message`, best first: agents awaiting this author's reply (they asked for it),
 * then every other agent whose shouldWake holds, in configured order. Empty: the humans' turn.
 */
export function nextCandidates(
  agents: readonly AgentProfile[],
  message: WakeInput,
  history: readonly WakeInput[],
  room: { directAgent?: string | null } = {},
): AgentProfile[] {
  const awake = agents.filter((agent) => shouldWake(agent, message, history, room));
  const requesters = awake.filter((agent) => isAwaiting(agent, message, history));
  return [...requesters, ...awake.filter((agent) => !requesters.includes(agent))];
}

/** The counter after a message is stored: agents count up, humans and the bridge reset it. */
export function countMessage(state: TurnState, kind: RoomMessage['kind']): TurnState {
  if (kind === 'agent') return { ...state, consecutive: state.consecutive + 1 };
  if (kind === 'human') return { consecutive: 0, control: 'agents' };
  return { ...state, consecutive: 0 };
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
