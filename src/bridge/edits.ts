/**
 * The shell side of edits (Inbound.edit): an edit that newly addresses agents, soon after the message, is taken in
 * as a message of its own that addresses only them, and they are woken; any other edit is dropped (not stored).
 * The decision is src/room/edits.ts; this only looks up what the message addressed before and carries it out.
 */
import type { Inbound } from '../ports.js';
import { withAddressed } from '../room/addressed.js';
import { newlyAddressed } from '../room/edits.js';
import { extractMentions } from '../room/mentions.js';
import type { RoomMessage } from '../room/types.js';
import type { ChannelActor } from './channel-actor.js';
import type { RoomState } from './room-state.js';

/** What a room offers here. */
export interface EditRoom {
  readonly state: RoomState;
  readonly actor: ChannelActor;
}

/** What the bridge offers here: its rooms, their store, the agents, the clock and the router. */
export interface EditShell<R extends EditRoom> {
  readonly isStopped: boolean;
  readonly clock: () => number;
  readonly config: {
    readonly agents: readonly { readonly name: string }[];
    readonly settings: { readonly EDIT_WAKE_MINUTES: number };
  };
  readonly options: { readonly store: { addressedBy(channelId: number, platformId: string): string[] | undefined } };
  room(platform: string, channel: string, directAgent?: string): R;
  readonly conductor: { route(room: R, message: RoomMessage, exclude?: readonly string[]): Promise<void> };
}

/** Marks the stored text, so the agents read it as a correction of the message above rather than a repeat. */
export const EDITED_PREFIX = '(edited) ';

export function receiveEdit<R extends EditRoom>(shell: EditShell<R>, event: Inbound): void {
  // Agents' own edits (streamed replies) and the bridge's are never requests.
  if (!event.edit || event.author.kind !== 'human' || shell.isStopped) return;
  const room = shell.room(event.platform, event.channel, event.direct?.agent);
  const known = shell.config.agents.map((agent) => agent.name);
  const at = event.at ?? shell.clock();
  const wake = newlyAddressed({
    addressing: withAddressed(extractMentions(event.text, known), event.addressed, known),
    addressedBefore: shell.options.store.addressedBy(room.state.row.id, event.edit.of) ?? [],
    originalAt: event.edit.originalAt,
    editedAt: at,
    windowMs: shell.config.settings.EDIT_WAKE_MINUTES * 60_000,
  });
  if (wake.length === 0) return;
  const stored = room.state.record({
    author: event.author.name,
    authorId: event.author.id,
    kind: 'human',
    content: EDITED_PREFIX + event.text,
    mentions: wake,
    at,
    platformIds: [event.messageId],
  });
  if (!stored) return; // this edit was taken in already (another bot delivered it)
  const others = known.filter((name) => !wake.includes(name));
  void room.actor.enqueue(() => shell.conductor.route(room, stored, others));
}
