/**
 * Inbound: a platform event becomes a room event — files saved into the room's workspace first, an edit with what
 * its message addressed before, an echo of the bridge's own post after that post is recorded — and resolves once
 * the room has stored it (or found it a duplicate).
 */
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Inbound } from '../ports.js';
import type { InboxPort, RoomStore } from '../store/port.js';
import type { Poster } from './poster.js';
import { RoomElsewhere, type Rooms } from './rooms.js';
import type { Uploads } from './uploads.js';

export class Reception {
  private stopped = false;

  constructor(
    private readonly deps: {
      readonly rooms: Pick<Rooms, 'get'>;
      readonly store: Pick<RoomStore, 'addressedBy'>;
      readonly uploads: Uploads;
      readonly poster: Pick<Poster, 'settled'>;
      /** A platform id a room stored (the newest per room is where a later catch-up may start). */
      readonly stored: (room: string, platformId: string) => void;
      readonly clock: () => number;
      readonly log: Logger;
      /** Posts a line of the bridge's own straight to a platform room (nothing is stored). */
      readonly notice: (platform: string, channel: string, text: string) => Promise<unknown>;
      /** With bridges sharing the store: where events for rooms another bridge serves are kept for it. */
      readonly inbox?: InboxPort | undefined;
    },
  ) {}

  stop(): void {
    this.stopped = true;
  }

  /** Stores an event and hands it to its room; 'elsewhere' when another bridge serves the room (it is kept for it). */
  async receive(input: Inbound): Promise<'elsewhere' | undefined> {
    if (this.stopped) return;
    const { uploads } = this.deps;
    const event = uploads.holds(input) ? await uploads.take(input) : input;
    if (this.stopped) return;
    let actor: Awaited<ReturnType<Rooms['get']>>;
    try {
      actor = await this.deps.rooms.get(event.platform, event.channel, event.direct?.agent);
    } catch (error) {
      // Another bridge sharing the store serves the room: it receives the message too.
      if (error instanceof RoomElsewhere) {
        await this.keep(event);
        return 'elsewhere';
      }
      // A room the store cannot even open (a database left read-only, a full disk): its message is not saved.
      await this.unsaved(event, error);
      return;
    }
    const at = event.at ?? this.deps.clock();
    if (event.edit) {
      // Agents' own edits (streamed replies) and the bridge's are never requests.
      if (event.author.kind !== 'human') return;
      const before = (await this.deps.store.addressedBy(actor.record.id, event.edit.of)) ?? [];
      await actor.deliver({
        type: 'edit',
        edit: {
          author: event.author.name,
          authorId: event.author.id,
          text: event.text,
          platformIds: [event.messageId],
          ...(event.addressed ? { addressed: event.addressed } : {}),
          originalAt: event.edit.originalAt,
          at,
          addressedBefore: before,
        },
      });
      return;
    }
    // Our own agents' messages are usually echoes of posts still being recorded: they wait for those posts.
    if (event.author.kind === 'agent') await this.deps.poster.settled(actor.key);
    const taken = await actor.deliver({
      type: 'message',
      message: {
        author: event.author.name,
        authorId: event.author.id,
        kind: event.author.kind,
        text: event.text,
        platformIds: [event.messageId],
        at,
        ...(event.author.kind === 'human' && event.addressed ? { addressed: event.addressed } : {}),
        ...(event.missed ? { missed: true } : {}),
      },
    });
    if (taken === 'duplicate')
      this.deps.log.debug({ room: actor.key, id: event.messageId }, 'duplicate message ignored');
    if (taken === 'done') this.deps.stored(actor.key, event.messageId);
    if (taken === 'failed') await this.unsaved(event, actor.lastFailure);
  }

  /**
   * An event for a room another bridge serves: kept in the store for it (Slack gives it to this bridge alone; on
   * Discord the room's bridge gets it too, and the second copy is a duplicate there). Stored before the adapter
   * acknowledges it.
   */
  private async keep(event: Inbound): Promise<void> {
    const { inbox } = this.deps;
    if (!inbox) return;
    try {
      await inbox.put(event.platform, event.channel, event.messageId, JSON.stringify(event), this.deps.clock());
    } catch (error) {
      this.deps.log.error(
        { err: error, room: `${event.platform}:${event.channel}` },
        'an event for another bridge could not be kept',
      );
    }
  }

  /** A store that cannot be written loses the message: a human's is said in the room, never dropped quietly. */
  private async unsaved(event: Inbound, failure: unknown): Promise<void> {
    this.deps.log.error(
      { err: failure, platform: event.platform, channel: event.channel, id: event.messageId },
      'a message could not be stored; no agent will see it',
    );
    if (event.author.kind !== 'human') return;
    const line = `A message from ${event.author.name} could not be saved, so no agent will see it (${describeError(failure)}). The bridge's log has the details.`;
    await this.deps.notice(event.platform, event.channel, line).catch((error: unknown) => {
      this.deps.log.warn(
        { err: error, channel: event.channel },
        'the line about an unsaved message could not be posted',
      );
    });
  }
}
