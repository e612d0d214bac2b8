import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Inbound } from '../ports.js';
import { NOT_A_REPLY } from '../room/types.js';
import type { Conductor } from './conductor.js';
import type { Edits } from './edits.js';
import type { Recorder } from './recorder.js';
import type { Room, Rooms } from './rooms.js';
import type { Uploads } from './uploads.js';

/**
 * Inbound: a platform event is stored once (however many agent bots received it), then handed to the
 * conductor in its room's order.
 */
export class Reception {
  private stopped = false;

  constructor(
    private readonly deps: {
      readonly rooms: Rooms;
      readonly recorder: Recorder;
      readonly conductor: Conductor;
      /** One transaction: a human message is stored with its round, or not at all. */
      readonly transaction: <T>(work: () => T) => T;
      /** Edits that address someone new (the rest are dropped). */
      readonly edits: Edits;
      /** Files attached to messages: saved in the room's workspace before the message is stored. */
      readonly uploads: Uploads;
      readonly clock: () => number;
      readonly log: Logger;
      /** Posts a line of the bridge's own straight to a platform room (nothing is stored). */
      readonly notice: (platform: string, channel: string, text: string) => Promise<unknown>;
    },
  ) {}

  stop(): void {
    this.stopped = true;
  }

  async receive(input: Inbound): Promise<void> {
    if (this.stopped) return;
    if (input.edit) return this.deps.edits.receive(input);
    if (input.author.kind !== 'human') return this.take(input);
    try {
      await this.take(input);
    } catch (error) {
      // A store that cannot be written (a database left root's, a full disk) loses the message: say so, never quietly.
      this.deps.log.error(
        { err: error, platform: input.platform, channel: input.channel, id: input.messageId },
        'a message could not be stored; no agent will see it',
      );
      const line = `A message from ${input.author.name} could not be saved, so no agent will see it (${describeError(error)}). The bridge's log has the details.`;
      await this.deps.notice(input.platform, input.channel, line).catch((failure: unknown) => {
        this.deps.log.warn(
          { err: failure, channel: input.channel },
          'the line about an unsaved message could not be posted',
        );
      });
    }
  }

  private async take(input: Inbound): Promise<void> {
    const { uploads } = this.deps;
    const event = uploads.holds(input) ? await uploads.take(input) : input;
    if (this.stopped) return;
    const room = this.deps.rooms.get(event.platform, event.channel, event.direct?.agent);
    if (event.author.kind === 'agent') {
      // Our own agents' messages are usually echoes of posts still being recorded by this room's
      // actor: check them in order, after the post that produced them.
      const epoch = room.actor.epoch;
      void room.actor.enqueue(async () => {
        // A post to this room from another room's turn may still be on its way to the store.
        if (room.posting.size > 0) await Promise.allSettled([...room.posting]);
        // An echo may be a later chunk of a long reply, recorded under the reply's first id.
        if (room.state.seen(event.messageId)) return;
        const stored = this.record(room, event);
        if (stored) this.deps.conductor.agentMessage(room, stored, NOT_A_REPLY, true, epoch, !event.missed);
      });
      return;
    }
    this.deps.transaction(() => {
      const stored = this.record(room, event);
      // A missed message is answered when its room's catch-up is done (the backlog as one conversation).
      if (stored?.kind === 'human') this.deps.conductor.human(room, stored, !event.missed);
    });
  }

  private record(room: Room, event: Inbound) {
    const stored = this.deps.recorder.record(room, {
      author: event.author.name,
      authorId: event.author.id,
      kind: event.author.kind,
      text: event.text,
      at: event.at ?? this.deps.clock(),
      platformIds: [event.messageId],
      addressed: event.author.kind === 'human' ? event.addressed : undefined,
    });
    if (!stored) this.deps.log.debug({ room: room.key, id: event.messageId }, 'duplicate message ignored');
    return stored;
  }
}
