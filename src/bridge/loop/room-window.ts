/**
 * Each room's newest messages in memory: the window a turn reads, loaded from the store once and extended with the
 * messages each committed decision stores, so a turn does not read the room's history again. Messages reach the store
 * only through a room's commit (an edit is a message of its own, a reply carries its tool runs) and leave it only
 * through /reset's clear: both pass through here. A window is dropped, and loaded again on the next read, when the
 * history is cleared, when the room's lease is lost or changes hands (a bridge that served it before must not serve a
 * stale window), and when a commit fails in a way that leaves unclear what was stored.
 *
 * A message's token counts are made here too, once: the first time a window holding it is read, for the encodings
 * the agents use, and kept with the message (in the window and, written back in one statement, in the store).
 */

import { renderingCount } from '../../llm/context.js';
import { sameRendering } from '../../llm/render-message.js';
import { type EncodingName, encodingFor } from '../../llm/tokens.js';
import type { Logger } from '../../log.js';
import type { Write } from '../../room/effects.js';
import type { RoomState } from '../../room/state.js';
import type { MessageTokens, RoomMessage } from '../../room/types.js';
import type { CommitResult, Fence, RoomStore } from '../../store/port.js';
import { storedMessage } from '../../store/stored-message.js';

/** Windows kept at most: the rooms read least recently are read from the store again when next asked for. */
const MAX_ROOMS = 2000;

export interface RoomWindowsDeps {
  readonly store: RoomStore;
  /** How many of a room's newest messages a window keeps (what a turn asks for). */
  readonly size: number;
  /** How many rooms' windows are kept (the least recently read go first); MAX_ROOMS unless given. */
  readonly rooms?: number | undefined;
  /** The encodings a message is counted in (those of the agents' models). */
  readonly encodings: readonly EncodingName[];
  readonly log: Logger;
}

/** The encodings the agents' models count in (each once). */
export function encodingsOf(agents: ReadonlyArray<{ readonly model: string }>): EncodingName[] {
  return [...new Set(agents.map((agent) => encodingFor(agent.model).encoding))];
}

/** A load under way, and the messages committed while it runs (it may or may not have read them). */
interface Loading {
  readonly messages: Promise<RoomMessage[]>;
  readonly committed: RoomMessage[];
}

export class RoomWindows {
  private readonly windows = new Map<number, RoomMessage[]>();
  private readonly loading = new Map<number, Loading>();
  /** Bumped by every drop: a load begun before it is not kept. */
  private readonly epochs = new Map<number, number>();
  /**
   * The fencing token of each room's last commit (replicas), kept across drops: another token means the room changed
   * hands since, whether or not this bridge saw its lease lost.
   */
  private readonly tokens = new Map<number, number | undefined>();
  /** Counts made and not written back yet. */
  private readonly unsaved: Array<{ id: number; tokens: MessageTokens }> = [];

  constructor(private readonly deps: RoomWindowsDeps) {}

  /** The room's newest `limit` messages, oldest first, with their counts: from memory once loaded. */
  async history(roomId: number, limit: number): Promise<RoomMessage[]> {
    if (limit > this.deps.size) return this.deps.store.history(roomId, limit);
    if (limit <= 0) return [];
    const loaded = this.windows.get(roomId) ?? (await this.load(roomId));
    // A commit may have extended the window while it loaded.
    const messages = this.windows.get(roomId) ?? loaded;
    const counted = this.counted(messages);
    if (this.windows.get(roomId) === messages) this.keep(roomId, counted);
    return counted.slice(-limit);
  }

  /** Commits through the store; the messages it stored join the room's window. */
  async commit(
    roomId: number,
    writes: readonly Write[],
    state: RoomState,
    fence?: Fence,
    stored?: number[],
  ): Promise<CommitResult> {
    const ids: number[] = [];
    let result: CommitResult;
    try {
      result = await this.deps.store.commit(roomId, writes, state, fence, ids);
    } catch (error) {
      // Whether anything was stored is not known (a connection lost after COMMIT was sent): read it again.
      this.drop(roomId);
      throw error;
    }
    stored?.push(...ids);
    if (this.tokens.has(roomId) && this.tokens.get(roomId) !== fence?.token) this.drop(roomId);
    this.tokens.set(roomId, fence?.token);
    if (result === 'done') this.extend(roomId, writes, ids);
    return result;
  }

  /** Forgets the room's messages in the store, and its window with them. */
  async clear(roomId: number): Promise<void> {
    this.drop(roomId);
    try {
      await this.deps.store.clear(roomId);
    } finally {
      this.drop(roomId);
    }
  }

  /** The room's window is not to be trusted any more (its lease was lost): the next read loads it again. */
  drop(roomId: number): void {
    this.windows.delete(roomId);
    this.loading.delete(roomId);
    this.epochs.set(roomId, this.epochOf(roomId) + 1);
  }

  /** The store as the room's loop and its turns use it: history from the windows, commits and clears through them. */
  store(): RoomStore {
    return new WindowedRooms(this.deps.store, this);
  }

  private epochOf(roomId: number): number {
    return this.epochs.get(roomId) ?? 0;
  }

  private load(roomId: number): Promise<RoomMessage[]> {
    const under = this.loading.get(roomId);
    if (under) return under.messages;
    const epoch = this.epochOf(roomId);
    const committed: RoomMessage[] = [];
    const messages = this.deps.store.history(roomId, this.deps.size).then(
      (loaded) => {
        const newest = loaded.at(-1)?.id ?? 0;
        const window = [...loaded, ...committed.filter((m) => m.id > newest)].slice(-this.deps.size);
        if (this.epochOf(roomId) === epoch) {
          this.loading.delete(roomId);
          this.keep(roomId, window);
        }
        return window;
      },
      (error: unknown) => {
        if (this.epochOf(roomId) === epoch) this.loading.delete(roomId);
        throw error;
      },
    );
    this.loading.set(roomId, { messages, committed });
    return messages;
  }

  /** Keeps a room's window as the most recently read; past the bound, the least recently read is let go. */
  private keep(roomId: number, window: RoomMessage[]): void {
    this.windows.delete(roomId);
    this.windows.set(roomId, window);
    if (this.windows.size <= (this.deps.rooms ?? MAX_ROOMS)) return;
    const oldest = this.windows.keys().next().value;
    if (oldest !== undefined) this.drop(oldest);
  }

  private extend(roomId: number, writes: readonly Write[], ids: readonly number[]): void {
    const window = this.windows.get(roomId);
    const loading = this.loading.get(roomId);
    // A room no turn has read yet has no window to extend (a room where no agent is woken never gets one).
    if (!window && !loading) return;
    const written = writes.filter((w): w is Extract<Write, { type: 'message' }> => w.type === 'message');
    if (written.length === 0) return;
    if (ids.length !== written.length) {
      // A store that did not say which rows it wrote: the window is read again rather than guessed.
      this.drop(roomId);
      return;
    }
    const added = written.map((write, i) => storedMessage(ids[i] ?? 0, write.message));
    if (window) this.windows.set(roomId, [...window, ...added].slice(-this.deps.size));
    else loading?.committed.push(...added);
  }

  /** The window with every message counted in every encoding: the ones not counted yet are counted and kept. */
  private counted(messages: RoomMessage[]): RoomMessage[] {
    const { encodings } = this.deps;
    const kept: Array<{ id: number; tokens: MessageTokens }> = [];
    const result = messages.map((message) => {
      const missing = encodings.filter((encoding) => message.tokens?.[encoding] === undefined);
      if (missing.length === 0) return message;
      const tokens: Record<string, number> = {};
      for (const encoding of missing) tokens[encoding] = renderingCount(message, encoding);
      const all: MessageTokens = { ...message.tokens, ...tokens };
      kept.push({ id: message.id, tokens: all });
      const counted = { ...message, tokens: all };
      // Counting rendered it: the counted message keeps that rendering (its context shows the same text).
      sameRendering(message, counted);
      return counted;
    });
    if (kept.length === 0) return messages;
    this.unsaved.push(...kept);
    // Written back after the turn has gone on to its model call, several rooms' counts in one statement.
    if (this.unsaved.length === kept.length) setImmediate(() => this.save());
    return result;
  }

  private save(): void {
    const counts = this.unsaved.splice(0);
    void this.deps.store.keepTokens(counts).catch((error: unknown) => {
      // Only a cost: the counts are made again after a restart.
      this.deps.log.warn({ err: error, messages: counts.length }, 'token counts were not kept');
    });
  }
}

/** A room store whose history, commits and clears go through the windows; the rest straight to the store. */
class WindowedRooms implements RoomStore {
  constructor(
    private readonly store: RoomStore,
    private readonly windows: RoomWindows,
  ) {}

  history: RoomStore['history'] = (roomId, limit) => this.windows.history(roomId, limit);
  commit: RoomStore['commit'] = (roomId, writes, state, fence, stored) =>
    this.windows.commit(roomId, writes, state, fence, stored);
  clear: RoomStore['clear'] = (roomId) => this.windows.clear(roomId);
  open: RoomStore['open'] = (platform, channel, directAgent) => this.store.open(platform, channel, directAgent);
  all: RoomStore['all'] = () => this.store.all();
  keepTokens: RoomStore['keepTokens'] = (counts) => this.store.keepTokens(counts);
  transcript: RoomStore['transcript'] = (roomId, page) => this.store.transcript(roomId, page);
  decisions: RoomStore['decisions'] = (roomId, from, to) => this.store.decisions(roomId, from, to);
  byPlatformId: RoomStore['byPlatformId'] = (roomId, id) => this.store.byPlatformId(roomId, id);
  seen: RoomStore['seen'] = (roomId, id) => this.store.seen(roomId, id);
  addressedBy: RoomStore['addressedBy'] = (roomId, id) => this.store.addressedBy(roomId, id);
  lastPlatformMessageId: RoomStore['lastPlatformMessageId'] = (platform, channel) =>
    this.store.lastPlatformMessageId(platform, channel);
  caughtUp: RoomStore['caughtUp'] = (platform, channel) => this.store.caughtUp(platform, channel);
  setCaughtUp: RoomStore['setCaughtUp'] = (platform, channel, id) => this.store.setCaughtUp(platform, channel, id);
  active: RoomStore['active'] = (platform) => this.store.active(platform);
  requests: RoomStore['requests'] = (room) => this.store.requests(room);
  notes: RoomStore['notes'] = () => this.store.notes();
  maxRequestId: RoomStore['maxRequestId'] = () => this.store.maxRequestId();
}
