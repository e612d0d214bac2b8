/**
 * Inbound: a platform event becomes a room event — files saved into the room's workspace first, an edit with what
 * its message addressed before, an echo of the bridge's own post after that post is recorded — and resolves once
 * the room has stored it (or found it a duplicate), or holds it in memory while the store cannot write.
 */
import { StoreError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Inbound, Receipt } from '../../ports.js';
import type { InboxPort, RoomStore } from '../../store/port.js';
import { traceInbound } from '../../trace/inbound.js';
import { Pause } from '../backoff.js';
import type { Poster } from '../executors/poster.js';
import type { RoomActor, Taken } from '../loop/room-actor.js';
import { RoomElsewhere, type Rooms } from '../loop/rooms.js';
import type { RoomPlace, StoreOutage } from '../loop/store-outage.js';
import type { AccessGate } from './access-gate.js';
import type { CatchUpMarks } from './catch-up-marks.js';
import type { Notices } from './notices.js';
import type { Prepared, Uploads } from './uploads.js';

/** What became of a received event: its receipt, or `elsewhere` when it is kept for the bridge that serves its room. */
export type Received = Receipt | 'elsewhere';

/**
 * A room's answer as the platform's sender sees it: stored or a duplicate is kept; refused is not. `stopped` while the
 * bridge goes on: the room was given up (its lease lapsed) with the event still queued — it is `moved`, and routed
 * again (to the room made anew, or kept for the bridge that serves it now).
 */
function receiptOf(taken: Taken): Receipt | 'moved' {
  if (taken === 'held') return 'held';
  if (taken === 'stopped') return 'moved';
  return taken === 'refused' ? 'lost' : 'kept';
}

/** How often an event is routed again after its room was given up under it, before it is taken as lost. */
const MAX_MOVES = 3;

export class Reception {
  private stopped = false;
  /** Events of rooms the store could not open yet (a new room while it fails), in arrival order, per room. */
  private readonly unopened = new Map<string, Inbound[]>();
  private readonly pause = new Pause();

  constructor(
    private readonly deps: {
      readonly rooms: Pick<Rooms, 'get' | 'caughtUp'>;
      readonly store: Pick<RoomStore, 'addressedBy'>;
      readonly uploads: Uploads;
      readonly poster: Pick<Poster, 'settled' | 'beforeStart' | 'isEcho'>;
      /** Where catch-ups start: a stored platform id moves a room's start on; a message not kept holds it back. */
      readonly marks: Pick<CatchUpMarks, 'lost'>;
      /** The bridge's own unstored lines (their echoes are not messages). */
      readonly notices: Pick<Notices, 'isNotice'>;
      readonly outage: Pick<StoreOutage, 'failed' | 'recovered' | 'hold' | 'release' | 'lost' | 'back'>;
      /** Who may make the agents act: DMs let in or not, room messages marked with whom they may wake. */
      readonly access?: Pick<AccessGate, 'admitDirect' | 'wakeable'> | undefined;
      readonly clock: () => number;
      readonly log: Logger;
      /** With bridges sharing the store: where events for rooms another bridge serves are kept for it. */
      readonly inbox?: InboxPort | undefined;
    },
  ) {}

  stop(): void {
    this.stopped = true;
    this.pause.stop();
    for (const waiting of this.unopened.values()) this.deps.outage.release(waiting.length);
    this.unopened.clear();
  }

  /**
   * Resolves once the room has stored the event (or found it a duplicate), or holds it until the store can, with what
   * became of it; 'elsewhere' when another bridge serves the room (the event is kept for it), 'lost' when even that
   * could not be written.
   */
  async receive(input: Inbound): Promise<Received> {
    if (this.stopped) return 'lost';
    // A DM its author may not send yet (pairing, DM_POLICY) is not stored: nothing they write reaches a model.
    if (input.direct && this.deps.access) {
      try {
        if (!(await this.deps.access.admitDirect(input))) return 'kept';
      } catch (error) {
        this.deps.log.error({ err: error, platform: input.platform }, 'who may DM could not be read: the DM waits');
        return 'lost';
      }
    }
    const { uploads } = this.deps;
    const event: Prepared = uploads.holds(input) ? await uploads.take(input) : input;
    if (this.stopped) return 'lost';
    // The bridge's own unstored line (about the store), its echo or read again by a catch-up, is not a message.
    if (event.author.kind === 'agent' && (await this.deps.notices.isNotice(event.messageId, event.text))) return 'kept';
    return this.route(event);
  }

  /** To the room's actor (made on first use), or kept for the bridge that serves the room. */
  private async route(event: Prepared, moves = 0): Promise<Received> {
    const key = `${event.platform}:${event.channel}`;
    const waiting = this.unopened.get(key);
    if (waiting) return this.keep(key, waiting, event);
    let actor: RoomActor;
    try {
      actor = await this.deps.rooms.get(event.platform, event.channel, event.direct?.agent);
    } catch (error) {
      // Another bridge sharing the store serves the room: it receives the message too.
      if (error instanceof RoomElsewhere) {
        const failure = await this.keepElsewhere(event);
        if (failure === undefined) return 'elsewhere';
        // The store cannot keep it now: held, and kept for that bridge once it can (its room looked up again).
        if (failure instanceof StoreError && failure.retryable)
          return this.unopenable({ key, platform: event.platform, channel: event.channel }, event, failure);
        return 'lost';
      }
      if (!(error instanceof StoreError && error.retryable)) {
        this.deps.log.error({ err: error, room: key, id: event.messageId }, 'the room could not be opened');
        return 'lost';
      }
      // A room the store cannot even open yet (its row cannot be written): its events wait, and it is tried again.
      return this.unopenable({ key, platform: event.platform, channel: event.channel }, event, error);
    }
    const receipt = await this.deliver(actor, event);
    if (receipt !== 'moved') return receipt;
    if (this.stopped || moves >= MAX_MOVES) return 'lost';
    this.deps.log.info(
      { room: key, id: event.messageId },
      'its room was given up with the message queued: routed again',
    );
    return this.route(event, moves + 1);
  }

  /** What the platform's adapter hears: an event kept for the bridge that serves its room is as safe as stored. */
  async receipt(input: Inbound): Promise<Receipt> {
    const received = await this.receive(input);
    return received === 'elsewhere' ? 'kept' : received;
  }

  /** A platform's message as it arrives: a human's opens its trace, then it is received (`receipt`). */
  arrive(input: Inbound): Promise<Receipt> {
    return traceInbound(input, this.receiptOf);
  }

  /** A message another replica handed over, under its trace (marked as handed over). */
  handedOver(input: Inbound): Promise<Received> {
    return traceInbound(input, this.receiveOf, 'handover');
  }

  private readonly receiptOf = (input: Inbound) => this.receipt(input);
  private readonly receiveOf = (input: Inbound) => this.receive(input);

  private async deliver(actor: RoomActor, event: Inbound): Promise<Receipt | 'moved'> {
    const at = event.at ?? this.deps.clock();
    if (event.edit) {
      // An edit by one of the bridge's own identities (a reply streamed by edits) is its own work, not news.
      if (event.author.kind !== 'human') return 'kept';
      const before = (await this.deps.store.addressedBy(actor.record.id, event.edit.of)) ?? [];
      const taken = await actor.deliver({
        type: 'edit',
        edit: {
          author: event.author.name,
          authorId: event.author.id,
          kind: event.author.kind,
          text: event.text,
          platformIds: [event.messageId],
          ...(event.addressed ? { addressed: event.addressed } : {}),
          ...this.deps.access?.wakeable(event),
          originalAt: event.edit.originalAt,
          at,
          addressedBefore: before,
          ...(event.trace !== undefined ? { trace: event.trace } : {}),
        },
      });
      if (taken === 'refused') this.lost(actor.key, event);
      return receiptOf(taken);
    }
    // Our own agents' messages are usually echoes of posts still being recorded: they wait for those posts.
    if (event.author.kind === 'agent') {
      if (this.deps.poster.beforeStart(actor.key)) {
        // A platform's start catches up before the bridge lets posts out: its echo waits aside, so the start does
        // not wait for posts that wait for it.
        void this.deps.poster
          .settled(actor.key)
          .then(() => (this.deps.poster.isEcho(actor.key, event.messageId) ? 'kept' : this.message(actor, event, at)))
          .catch((error: unknown) => this.deps.log.error({ err: error, room: actor.key }, 'an echo was not taken'));
        // The post it echoes is the bridge's own, recorded with its outbox entry.
        return 'kept';
      }
      await this.deps.poster.settled(actor.key);
      // The echo of a post this bridge just made: the room recorded it with the post (vercel/chat drops `isMe` first).
      if (this.deps.poster.isEcho(actor.key, event.messageId)) return 'kept';
    }
    return this.message(actor, event, at);
  }

  /**
   * An event for a room another bridge serves: kept in the store for it (Slack gives it to this bridge alone; on
   * Discord the room's bridge gets it too, and the second copy is a duplicate there). Stored before the adapter
   * acknowledges it. Resolves with why it could not be written, if it could not.
   */
  private async keepElsewhere(event: Inbound): Promise<unknown> {
    const { inbox } = this.deps;
    if (!inbox) return new Error('no store to keep it in for another bridge');
    try {
      await inbox.put(event.platform, event.channel, event.messageId, JSON.stringify(event), this.deps.clock());
      return undefined;
    } catch (error) {
      this.deps.log.error(
        { err: error, room: `${event.platform}:${event.channel}` },
        'an event for another bridge could not be kept',
      );
      return error ?? new Error('the event could not be kept');
    }
  }

  private async message(actor: RoomActor, event: Prepared, at: number): Promise<Receipt | 'moved'> {
    const taken = await actor.deliver(
      {
        type: 'message',
        message: {
          author: event.author.name,
          authorId: event.author.id,
          kind: event.author.kind,
          text: event.text,
          ...(event.fileLines && event.fileLines.length > 0 ? { files: event.fileLines } : {}),
          platformIds: [event.messageId],
          at,
          ...(event.author.kind === 'human' && event.addressed ? { addressed: event.addressed } : {}),
          ...(event.missed ? { missed: true } : {}),
          ...(event.author.kind === 'human' ? this.deps.access?.wakeable(event) : undefined),
          ...(event.trace !== undefined ? { trace: event.trace } : {}),
        },
      },
      { afterHeld: (later) => this.heldLeft(actor.key, event, later) },
    );
    if (taken === 'duplicate')
      this.deps.log.debug({ room: actor.key, id: event.messageId }, 'duplicate message ignored');
    if (taken === 'refused') this.lost(actor.key, event);
    return receiptOf(taken);
  }

  /**
   * A message held in an outage whose room was given up before the store took it (its lease lapsed meanwhile): its
   * sender was told it is kept, and the web room has no other copy, so it is routed again — to the room made anew
   * once the store is back, or kept for the replica serving it.
   */
  private heldLeft(room: string, event: Prepared, later: Taken): void {
    if (later !== 'stopped' || this.stopped) return;
    this.deps.log.info({ room, id: event.messageId }, 'its room was given up with the message held: routed again');
    void this.route(event)
      .then(async (received) => {
        // A catch-up's message: its catch-up's end went to the room given up. The room made anew is told it is in,
        // or its asks would wait for a catch-up's end for good.
        if (event.missed && (received === 'kept' || received === 'held')) await this.deps.rooms.caughtUp(room);
      })
      .catch((error: unknown) =>
        this.deps.log.error({ err: error, room, id: event.messageId }, 'a held message could not be routed again'),
      );
  }

  /** Holds an event of a room that cannot be opened yet, within the bound (past it, it is lost for this run). */
  private keep(key: string, waiting: Inbound[], event: Inbound): Receipt {
    if (!this.deps.outage.hold()) {
      this.lost(key, event);
      return 'lost';
    }
    waiting.push(event);
    return 'held';
  }

  private unopenable(place: RoomPlace, event: Inbound, error: unknown): Receipt {
    const already = this.unopened.get(place.key);
    // The same failed opening, seen by a message that arrived meanwhile.
    if (already) return this.keep(place.key, already, event);
    const waiting: Inbound[] = [];
    this.unopened.set(place.key, waiting);
    const receipt = this.keep(place.key, waiting, event);
    void this.openLater(place, event.direct?.agent, waiting, error);
    return receipt;
  }

  /** Tries to open the room, waiting longer each time; then hands it what waited, in order. */
  private async openLater(place: RoomPlace, directAgent: string | undefined, waiting: Inbound[], failure: unknown) {
    let error = failure;
    let actor: RoomActor | undefined;
    for (let tries = 1; !actor; tries++) {
      await this.pause.wait(this.deps.outage.failed(place, error, tries), this.deps.outage.back);
      if (this.stopped) return;
      try {
        actor = await this.deps.rooms.get(place.platform, place.channel, directAgent);
      } catch (next) {
        error = next;
        if (next instanceof RoomElsewhere) {
          // Another bridge sharing the store serves the room: what waited is kept for it; what cannot be kept yet
          // waits on (the store is away), and is tried again.
          for (let first = waiting[0]; first; first = waiting[0]) {
            const failure = await this.keepElsewhere(first);
            if (failure !== undefined && failure instanceof StoreError && failure.retryable) {
              error = failure;
              break;
            }
            // Kept, or refused for good (logged).
            waiting.shift();
            this.deps.outage.release();
          }
          if (waiting.length > 0) continue;
          this.deps.outage.recovered(place, 0);
          this.unopened.delete(place.key);
          return;
        }
        if (!(next instanceof StoreError && next.retryable)) {
          this.deps.log.error({ err: next, room: place.key, dropped: waiting.length }, 'the room could not be opened');
          this.deps.outage.release(waiting.splice(0).length);
          this.unopened.delete(place.key);
          return;
        }
      }
    }
    this.deps.outage.recovered(place, waiting.length);
    for (let next = waiting.shift(); next; next = waiting.shift()) {
      this.deps.outage.release();
      await this.deliver(actor, next).catch((problem: unknown) =>
        this.deps.log.error(
          { err: problem, room: place.key },
          'a message held while its room could not be opened failed',
        ),
      );
      if (this.stopped) return;
    }
    this.unopened.delete(place.key);
  }

  /** Not kept: its room's catch-up mark stays before it, so the next start reads it again from the platform. */
  private lost(room: string, event: Inbound): void {
    this.deps.outage.lost(room, event.messageId);
    this.deps.marks.lost(room);
  }
}
