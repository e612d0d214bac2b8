/**
 * Acting for someone (docs/trust.md): an agent posting into another room, or sending a DM, acts for the human whose
 * message started its chain (the root). It may do so without an operator only where that human could themselves:
 * a channel they can post in, a DM to themselves. Anything else needs an operator's approval.
 */
import type { Root } from '../../room/state.js';
import type { RoomHandle } from '../loop/room-handle.js';

/**
 * The platforms whose people the bridge cannot vouch for (their access policy is read too): elsewhere — the
 * operator's terminal, the web room's invited people — everyone may post in every room the bridge serves.
 */
const CHECKED_PLATFORMS: ReadonlySet<string> = new Set(['discord', 'slack']);

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Undefined when the call may go ahead; else why only an operator may approve it. */
export async function actingOutside(
  room: RoomHandle,
  root: Root | undefined,
  tool: string,
  args: unknown,
): Promise<string | undefined> {
  if (!CHECKED_PLATFORMS.has(room.platform)) return undefined;
  const given = (args ?? {}) as { readonly to?: unknown; readonly channel?: unknown };
  if (tool === 'send_dm') {
    const to = String(given.to ?? '').replace(/^@/, '');
    if (root && same(to, root.name)) return undefined;
    if (!root) return `It is a DM to @${to}, and no one person asked for it`;
    const may = await room.adapter.mayDirect?.(root.id, to, room.channel.split('/')[0] ?? room.channel);
    if (may === true) return undefined;
    return may === false
      ? `It is a DM to @${to}, who shares no room with @${root.name}`
      : `It is a DM to @${to}, and whether @${root.name} shares a room with them cannot be told`;
  }
  if (tool !== 'send_channel_message') return undefined;
  const reference = String(given.channel ?? '').trim();
  if (reference === '' || reference.toLowerCase() === 'here') return undefined;
  const channel = await room.adapter.resolveChannel?.(reference);
  const home = room.channel.split('/')[0];
  if (channel !== undefined && channel === home) return undefined;
  if (!root) return `It posts in ${reference}, and no one person asked for it`;
  const may = channel === undefined ? undefined : await room.adapter.mayPost?.(channel, root.id);
  if (may === true) return undefined;
  return may === false
    ? `It posts in ${reference}, where @${root.name} cannot post`
    : `It posts in ${reference}, and whether @${root.name} may post there cannot be told`;
}
