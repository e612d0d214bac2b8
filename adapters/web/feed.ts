/**
 * One web room's live feed: every event is numbered and kept in a ring of the newest, so a page whose connection
 * dropped asks for what came after the last number it saw and gets exactly that (nothing lost, nothing twice); a
 * page from before a restart (another epoch) or away too long loads the room afresh. The replies being written are
 * kept too, so a page that arrives mid-reply shows it.
 */
import type { FeedEvent, ServerFrame, WireMessage } from './protocol.js';

/** Events kept per room for pages that come back. */
const RING = 2000;

type Listener = (frame: ServerFrame) => void;

interface Numbered {
  readonly n: number;
  readonly event: FeedEvent;
}

export class RoomFeed {
  private newest = 0;
  /** The newest event no longer kept for lack of room: a page that saw less than this loads afresh. */
  private floor = 0;
  private readonly ring: Numbered[] = [];
  private readonly listeners = new Set<Listener>();
  private readonly open = new Map<string, { id: string; agent: string; text: string; at: number }>();

  constructor(readonly epoch: string) {}

  /** The newest event's number. */
  get n(): number {
    return this.newest;
  }

  /**
   * Numbers an event, keeps it, and tells every page in the room. A reply's earlier texts while it was written are
   * dropped from the ring once a newer one (or its end) is in: a page coming back needs only the newest.
   */
  publish(event: FeedEvent): void {
    const n = ++this.newest;
    const replaces = event.kind === 'message' ? event.message.id : event.kind === 'tool' ? undefined : event.id;
    if (replaces !== undefined && this.open.has(replaces)) this.dropStreamed(replaces);
    // A message shown again (a closed approval card) replaces its earlier showing: a page coming back gets one.
    if (event.kind === 'message') this.dropShown(event.message.id);
    this.ring.push({ n, event });
    if (this.ring.length > RING) {
      const gone = this.ring.splice(0, this.ring.length - RING);
      this.floor = gone.at(-1)?.n ?? this.floor;
    }
    if (event.kind === 'stream')
      this.open.set(event.id, { id: event.id, agent: event.agent, text: event.text, at: event.at });
    else if (event.kind === 'unstream') this.open.delete(event.id);
    else if (event.kind === 'message') this.open.delete(event.message.id);
    const frame: ServerFrame = { type: 'event', n, event };
    for (const listener of this.listeners) listener(frame);
  }

  private dropShown(id: string): void {
    const at = this.ring.findIndex((entry) => entry.event.kind === 'message' && entry.event.message.id === id);
    if (at >= 0) this.ring.splice(at, 1);
  }

  private dropStreamed(id: string): void {
    let kept = 0;
    for (const entry of this.ring) {
      if (entry.event.kind === 'stream' && entry.event.id === id) continue;
      this.ring[kept++] = entry;
    }
    this.ring.length = kept;
  }

  /** Sends a frame that is not kept (an agent is typing). */
  signal(frame: ServerFrame): void {
    for (const listener of this.listeners) listener(frame);
  }

  /** Listens from now on; returns how to stop. */
  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether a page at event `after` of `epoch` can be brought up to date from the ring. */
  canResume(epoch: string, after: number): boolean {
    return epoch === this.epoch && after <= this.newest && after >= this.floor;
  }

  /** The events after `after`, in order (see canResume). */
  since(after: number): ServerFrame[] {
    return this.ring.filter((entry) => entry.n > after).map(({ n, event }) => ({ type: 'event', n, event }));
  }

  /** Replies being written now. */
  streams(): Array<{ id: string; agent: string; text: string; at: number }> {
    return [...this.open.values()];
  }

  /** The messages in the ring, oldest first (those not stored yet are among them). */
  messages(): WireMessage[] {
    return this.ring.flatMap(({ event }) => (event.kind === 'message' ? [event.message] : []));
  }
}
