/**
 * Privacy (`mentions` mode, seed 003): a message that mentions agents is visible to its author and the
 * agents it mentions; a reply written in answer to a private message is visible to the same participants
 * (and anyone it names). Everything else is public. Agents are never woken by, nor shown, a message they
 * cannot see. Humans see the platform's room as it is: this governs what agents are given.
 */
import type { RoomMessage } from './types.js';

export type PrivacyMode = 'off' | 'mentions';

const key = (name: string) => name.toLowerCase();

function unique(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.filter((name) => {
    const k = key(name);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * Who may see a new message. `mentions` are the agents it addresses; `replyAudience` is the audience of
 * the private exchange the message answers (null: it answers nothing private).
 */
export function audienceOf(input: {
  readonly mode: PrivacyMode;
  readonly kind: RoomMessage['kind'];
  readonly author: string;
  readonly mentions: readonly string[];
  readonly replyAudience?: readonly string[] | null | undefined;
}): string[] | null {
  if (input.mode !== 'mentions' || input.kind === 'system') return null;
  if (input.replyAudience) return unique([...input.replyAudience, input.author, ...input.mentions]);
  if (input.mentions.length === 0) return null;
  return unique([input.author, ...input.mentions]);
}

/** True when `agent` may see `message`. */
export function canSee(agent: string, message: Pick<RoomMessage, 'audience'>): boolean {
  return !message.audience || message.audience.some((name) => key(name) === key(agent));
}

/** The messages `agent` may see, in order. */
export function visibleTo<T extends Pick<RoomMessage, 'audience'>>(agent: string, messages: readonly T[]): T[] {
  return messages.filter((message) => canSee(agent, message));
}

/**
 * Who may share one batched call (rule 14.1): the agents that see the same messages of the room. Under privacy an
 * agent left out of a private exchange sees another room than those in it, and is asked on its own. Groups keep the
 * order of their first member, members their order.
 */
export function seeingAlike<T>(
  members: readonly T[],
  agentOf: (member: T) => string,
  messages: readonly Pick<RoomMessage, 'id' | 'audience'>[],
): T[][] {
  const groups = new Map<string, T[]>();
  for (const member of members) {
    const seen = visibleTo(agentOf(member), messages)
      .map((message) => message.id)
      .join(',');
    const group = groups.get(seen);
    if (group) group.push(member);
    else groups.set(seen, [member]);
  }
  return [...groups.values()];
}

/** The room's mode: the operators' stored choice (/privacy) wins over the configured default. */
export function privacyMode(stored: PrivacyMode | null, configured: PrivacyMode): PrivacyMode {
  return stored ?? configured;
}

/**
 * Where something was said or done: the room (its key) and, under privacy, the audience of the exchange it belongs
 * to (null: everyone in that room may see it). An agent's recent actions and its knowledge carry the place they come
 * from.
 */
export interface Place {
  readonly room: string;
  readonly audience: readonly string[] | null;
}

/**
 * Whether what happened at `origin` may be shown in a turn at `here`: only in the same room (a DM's only in that
 * DM, a private chat's only there), and only when everyone who may see `here` could see `origin` — a private
 * exchange's only in turns of that exchange (or of a smaller one among its participants), never in a public one.
 */
export function shownAt(origin: Place, here: Place): boolean {
  if (origin.room !== here.room) return false;
  if (origin.audience === null) return true;
  const allowed = new Set(origin.audience.map(key));
  // A public turn (no audience) is seen by anyone in the room: never a private exchange's.
  return here.audience?.every((name) => allowed.has(key(name))) ?? false;
}
