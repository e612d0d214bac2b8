/**
 * Rule 16: access. A human the access policy does not let in may still be read (their message is the room's
 * history), but wakes no agent it is not allowed to: it asks nobody, answers no agent's question, takes no turn
 * from the agents and gives the room back to no one. They are told why once per room.
 */
import { type Draft, same } from './draft.js';

/** How many people a room remembers having told (the oldest are told again past it). */
const TOLD_KEPT = 200;

/** What the access policy says of one human message. */
export interface Access {
  /** The agents its author may wake; undefined: every agent. */
  readonly mayWake?: readonly string[] | undefined;
  readonly refused?: 'user' | 'channel' | undefined;
}

/** Whether the author may wake this agent. */
export function mayWake(access: Access, agent: string): boolean {
  return access.mayWake === undefined || access.mayWake.some((name) => same(name, agent));
}

/** An outsider: the author may wake no agent here. */
export function outsider(access: Access): boolean {
  return access.mayWake !== undefined && access.mayWake.length === 0;
}

/** The line a refused person reads once. */
export function refusalLine(why: 'user' | 'channel', agents: readonly string[]): string {
  // Named, not mentioned: the line pings nobody.
  const whom = agents.join(', ');
  return why === 'channel'
    ? `${whom} ${agents.length > 1 ? 'do' : 'does'} not answer in this channel (the bridge's access policy). An operator can show it with /access.`
    : `${whom} ${agents.length > 1 ? 'take' : 'takes'} requests only from people on the bridge's access list, so your message was kept as history and woke nobody. An operator can add you (see /access).`;
}

/** Tells the author why once per room (their later refusals are recorded, not told). */
export function tellRefused(
  d: Draft,
  author: { readonly id: string; readonly name: string },
  why: 'user' | 'channel',
  agents: readonly string[],
): void {
  const told = d.state.toldAccess ?? [];
  if (agents.length === 0 || told.includes(author.id)) return;
  d.set({ toldAccess: [...told, author.id].slice(-TOLD_KEPT) });
  d.effect({ type: 'tell', user: author, text: refusalLine(why, agents) });
}
