/** The access gate's parts that come from the configuration and the adapters. */
import type { AccessPolicy, AccessRule } from '../../access/policy.js';
import { globalRule } from '../../config/access.js';
import type { Config } from '../../config/index.js';
import type { ChatAdapter } from '../../ports.js';
import type { RoomState } from '../../room/state.js';
import type { RoomStore } from '../../store/port.js';
import type { RoomHandle } from '../loop/room-handle.js';
import { RoomElsewhere, type Rooms } from '../loop/rooms.js';
import type { Notices } from './notices.js';

/** The policy as configured: ACCESS_* and each agent file's `access:`; OPERATORS are always let in. */
export function accessPolicy(config: Pick<Config, 'settings' | 'agents'>): AccessPolicy {
  const agents = new Map<string, AccessRule>();
  for (const agent of config.agents) if (agent.access) agents.set(agent.name.toLowerCase(), agent.access);
  return { rule: globalRule(config.settings), agents, operators: new Set(config.settings.OPERATORS) };
}

/**
 * A line for one person in a room: ephemeral where the adapter can (Slack, the web room), else a line of the
 * bridge's own in the room, not stored, naming them.
 */
export async function tellOne(
  adapters: ReadonlyMap<string, ChatAdapter>,
  notices: Pick<Notices, 'post'>,
  room: RoomHandle,
  user: { readonly id: string; readonly name: string },
  text: string,
): Promise<void> {
  const adapter = adapters.get(room.platform);
  if (adapter?.tell && (await adapter.tell(room.channel, user.id, text))) return;
  await notices.post(room.platform, room.channel, `@${user.name}: ${text}`);
}

/**
 * Whether a DM's room waits for this person: an agent asked them there (send_dm with a question or request_reply),
 * so their answer is let in though they are not paired. A room another bridge serves is asked there.
 */
export async function expectedIn(
  deps: { readonly rooms: Pick<Rooms, 'get'>; readonly store: Pick<RoomStore, 'lastPlatformMessageId'> },
  platform: string,
  channel: string,
  agent: string,
  person: string,
): Promise<boolean> {
  if ((await deps.store.lastPlatformMessageId(platform, channel)) === undefined) return false;
  let state: RoomState;
  try {
    state = (await deps.rooms.get(platform, channel, agent)).state;
  } catch (error) {
    if (error instanceof RoomElsewhere) return true;
    throw error;
  }
  const named = (name: string) => name.toLowerCase() === person.toLowerCase();
  return (
    Object.values(state.awaiting).some((humans) => humans.some(named)) ||
    state.requests.some((request) => request.awaited.some((p) => p.kind === 'human' && named(p.name)))
  );
}
