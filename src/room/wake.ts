import { canSee } from './privacy.js';
import type { AgentProfile, RoomMessage } from './types.js';

/** The part of a message that waking depends on. */
export type WakeInput = Pick<RoomMessage, 'author' | 'kind' | 'mentions' | 'requests'> &
  Partial<Pick<RoomMessage, 'audience'>>;

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * True when `agent`'s own last message in `history` asked `message`'s author — an agent or a human —
 * (named them, not merely in answer to them) and that author has not spoken since: the agent awaits
 * this reply.
 */
export function isAwaiting(agent: AgentProfile, message: WakeInput, history: readonly WakeInput[]): boolean {
  for (let i = history.length - 1; i >= 0; i--) {
    const earlier = history[i];
    if (!earlier) continue;
    if (same(earlier.author, agent.name) && earlier.kind === 'agent') {
      return (earlier.requests ?? earlier.mentions).some((name) => same(name, message.author));
    }
    if (same(earlier.author, message.author)) return false; // already answered since
  }
  return false;
}

/**
 * Whether `agent` should answer `message` (seed rules, in order): never its own message; never the
 * bridge's own messages; never a message it cannot see (privacy); a DM always wakes its agent; wake if
 * it is awaiting this author's reply; then `always`, or `mention` when mentioned.
 * `history` is the room's messages before `message`, oldest first.
 */
export function shouldWake(
  agent: AgentProfile,
  message: WakeInput,
  history: readonly WakeInput[],
  room: { directAgent?: string | null } = {},
): boolean {
  if (same(message.author, agent.name) && message.kind === 'agent') return false;
  if (message.kind === 'system') return false;
  if (!canSee(agent.name, message)) return false;
  if (room.directAgent) return same(room.directAgent, agent.name);
  if (isAwaiting(agent, message, history)) return true;
  if (agent.activation === 'always') return true;
  return message.mentions.some((name) => same(name, agent.name));
}
