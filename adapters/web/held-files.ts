/**
 * Files a person uploaded for a message they are about to send: held in memory, for that person and room only,
 * until the message takes them (the bridge then saves them into the room's sandbox workspace, under `uploads/`, as
 * it does for Discord and Slack attachments), and then let go. Unclaimed files go after a while; a person holds a few
 * at most, and all together hold at most `totalBytes` (an upload past it is refused).
 */
import { randomUUID } from 'node:crypto';
import type { InboundFile } from '../../src/ports.js';

/** How long an upload waits for its message. */
const HOLD_MS = 15 * 60 * 1000;
/** Uploads one person may hold at once (the oldest goes first). */
const PER_PERSON = 10;

interface Held {
  readonly id: string;
  readonly owner: string;
  readonly room: string;
  readonly name: string;
  readonly mimeType: string | undefined;
  readonly bytes: Uint8Array;
  readonly at: number;
}

export class HeldFiles {
  private readonly files = new Map<string, Held>();
  private held = 0;

  constructor(
    private readonly clock: () => number,
    /** What all held uploads together may hold, in bytes. */
    readonly totalBytes: number,
  ) {}

  /** Whether `size` more bytes can be held now. */
  fits(size: number): boolean {
    this.expire();
    return this.held + size <= this.totalBytes;
  }

  /** Holds an upload; returns its id, or undefined when it would take the total past `totalBytes`. */
  hold(input: {
    owner: string;
    room: string;
    name: string;
    mimeType: string | undefined;
    bytes: Uint8Array;
  }): string | undefined {
    this.expire();
    const mine = [...this.files.values()].filter((file) => file.owner === input.owner);
    for (const old of mine.slice(0, Math.max(0, mine.length - PER_PERSON + 1))) this.drop(old.id);
    if (!this.fits(input.bytes.byteLength)) return undefined;
    const id = randomUUID();
    this.files.set(id, { ...input, id, at: this.clock() });
    this.held += input.bytes.byteLength;
    return id;
  }

  /** Lets go of uploads a message took. */
  release(ids: readonly string[]): void {
    for (const id of ids) this.drop(id);
  }

  /** The held uploads with these ids, if each is this person's in this room; undefined when one is not. */
  claim(ids: readonly string[], owner: string, room: string): InboundFile[] | undefined {
    this.expire();
    const files: InboundFile[] = [];
    for (const id of ids) {
      const held = this.files.get(id);
      if (!held || held.owner !== owner || held.room !== room) return undefined;
      files.push({
        name: held.name,
        mimeType: held.mimeType,
        size: held.bytes.byteLength,
        download: async () => held.bytes,
      });
    }
    return files;
  }

  private expire(): void {
    const now = this.clock();
    for (const [id, file] of this.files) if (now - file.at > HOLD_MS) this.drop(id);
  }

  private drop(id: string): void {
    const file = this.files.get(id);
    if (!file) return;
    this.files.delete(id);
    this.held -= file.bytes.byteLength;
  }
}
