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
import type { Room, Rooms } from './rooms.js';

/** Marks the stored text, so the agents read it as a correction of the message above rather than a repeat. */
export const EDITED_PREFIX = '(edited) ';

export class Edits {
  constructor(
    private readonly deps: {
      readonly rooms: Rooms;
      readonly agents: readonly string[];
      readonly clock: () => number;
      readonly windowMs: number;
      /** Which agents the stored message with this platform id addressed (undefined: not stored). */
      readonly addressedBy: (channelId: number, platformId: string) => string[] | undefined;
      /** Routes the stored edit to the agents it newly addresses (the others are excluded). */
      readonly wake: (room: Room, message: RoomMessage, exclude: readonly string[]) => void;
    },
  ) {}

  receive(event: Inbound): void {
    // Agents' own edits (streamed replies) and the bridge's are never requests.
    if (!event.edit || event.author.kind !== 'human') return;
    const { rooms, agents, clock } = this.deps;
    const room = rooms.get(event.platform, event.channel, event.direct?.agent);
    const at = event.at ?? clock();
    const wake = newlyAddressed({
      addressing: withAddressed(extractMentions(event.text, agents), event.addressed, agents),
      addressedBefore: this.deps.addressedBy(room.state.row.id, event.edit.of) ?? [],
      originalAt: event.edit.originalAt,
      editedAt: at,
      windowMs: this.deps.windowMs,
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
    this.deps.wake(
      room,
      stored,
      agents.filter((name) => !wake.includes(name)),
    );
  }
}
