/**
 * The store port: everything the bridge keeps, behind Promise-based interfaces, so the embedded SQLite store and a
 * server database implement the same contract. A room's decision is committed in one call (`RoomStore.commit`): its
 * messages, its state and its requests and notes are stored together, or not at all. No routing, model call or
 * platform I/O ever runs inside a store call.
 */
import type { RequestRow, Write } from '../room/effects.js';
import type { Note } from '../room/events.js';
import type { RoomState } from '../room/state.js';
import type { RoomMessage } from '../room/types.js';

/** A room's row: where it is, whose DM it is, and its stored state (null for a new room). */
export interface RoomRecord {
  readonly id: number;
  readonly platform: string;
  readonly channel: string;
  /** `platform:channel`. */
  readonly key: string;
  readonly directAgent: string | null;
  readonly state: RoomState | null;
}

/** A note for a room, written by another room's decision and not yet taken. */
export interface NoteRecord {
  readonly id: string;
  readonly room: string;
  readonly note: Note;
}

export type CommitResult = 'done' | 'duplicate';

/**
 * The lease a decision is committed under, when several bridges share the store (replicas): its fencing token. A
 * commit whose token is no longer the room's (the lease ended or changed hands) stores nothing and throws
 * `LeaseLostError`. SQLite has one bridge per data folder, which owns every room: it takes no fence.
 */
export interface Fence {
  readonly token: number;
}

/** A room held by this bridge: its fencing token, and when the lease ends (ms since the epoch, the database's clock). */
export interface Lease {
  readonly roomId: number;
  readonly token: number;
  readonly expiresAt: number;
}

/**
 * Room leases, for bridges sharing one database (replicas): one holder per room at a time, for a time counted by the
 * database's clock; a change of hands gives a larger fencing token. SQLite has none: its one bridge owns every room.
 */
export interface LeasePort {
  /** Takes (or keeps) a room for `holder` for `ttlMs`; undefined while another holder's lease is live. */
  acquire(roomId: number, holder: string, ttlMs: number): Promise<Lease | undefined>;
  /** Extends `holder`'s live leases on these rooms by `ttlMs`; resolves with those it still holds. */
  renew(holder: string, roomIds: readonly number[], ttlMs: number): Promise<Lease[]>;
  /** Ends `holder`'s leases at once (these rooms, or all): another replica may take them now. */
  release(holder: string, roomIds?: readonly number[]): Promise<number[]>;
  /** Every live lease: which replica serves which room. */
  holders(): Promise<Array<Lease & { holder: string }>>;
  /** Ends `holder`'s leases on rooms with work left at once, for another bridge to take up (see `lapsed`). */
  handOver(holder: string, roomIds: readonly number[]): Promise<number[]>;
  /** The rooms whose lease ended unreleased: their bridge died, was cut off, or handed them over with work left. */
  lapsed(): Promise<number[]>;
}

/** A platform event kept for the bridge that serves its room. */
export interface InboxEvent {
  readonly id: number;
  readonly platform: string;
  readonly channel: string;
  /** The event as the adapter gave it (JSON). */
  readonly event: string;
}

/**
 * Events a bridge received for a room another bridge serves (replicas): kept until the room's holder takes them.
 * SQLite has none: its one bridge serves every room.
 */
export interface InboxPort {
  /** Keeps an event (once per platform message id). */
  put(platform: string, channel: string, platformId: string, event: string, at: number): Promise<void>;
  /** The events kept for rooms `holder` serves or no bridge does (their lease lapsed, or none), oldest first. */
  list(holder: string): Promise<InboxEvent[]>;
  /** Forgets events taken. */
  done(ids: readonly number[]): Promise<void>;
}

/** Blocks of request ids from a store several bridges share, so no two bridges give the same id. */
export interface RequestIdBlocks {
  /** A block of fresh ids: `first` and the `count` that follow it. */
  reserve(): Promise<{ first: number; count: number }>;
}

export interface RoomStore {
  /** The room's row, created on first sight (with its state as stored, or null when new). */
  open(platform: string, channel: string, directAgent?: string): Promise<RoomRecord>;
  /** Every room the store knows, in the order they were first seen. */
  all(): Promise<RoomRecord[]>;
  /**
   * Stores one decision: its writes and the room's new state, in one transaction. When a message it stores has a
   * platform id the room already has, nothing is stored and the result is `duplicate`. `open` and `all` return the
   * state last committed (after a restart too).
   */
  commit(roomId: number, writes: readonly Write[], state: RoomState, fence?: Fence): Promise<CommitResult>;
  /** The room's newest `limit` messages, oldest first. */
  history(roomId: number, limit: number): Promise<RoomMessage[]>;
  /** The stored message a platform id belongs to (any chunk of it). */
  byPlatformId(roomId: number, platformId: string): Promise<RoomMessage | undefined>;
  /** Whether this platform id is stored in the room already. */
  seen(roomId: number, platformId: string): Promise<boolean>;
  /** The agents a stored message and its stored edits (`<id>:edit:…`) addressed; undefined when not stored. */
  addressedBy(roomId: number, platformId: string): Promise<string[] | undefined>;
  /** Forgets a room's messages; their platform ids stay known (nothing is answered twice). */
  clear(roomId: number): Promise<void>;
  /** The newest platform message id stored for a room (where a catch-up starts without a mark). */
  lastPlatformMessageId(platform: string, channel: string): Promise<string | undefined>;
  /** A room's catch-up mark: the platform id up to which nothing is missing. */
  caughtUp(platform: string, channel: string): Promise<string | undefined>;
  setCaughtUp(platform: string, channel: string, platformId: string): Promise<void>;
  /** The rooms of a platform, most recently active first. */
  active(platform: string): Promise<Array<{ channel: string; agent?: string }>>;
  /** Requests, for /status and the operator console: those of a room (as origin or target), or all. */
  requests(room?: string): Promise<RequestRow[]>;
  /** Notes not yet taken by their room, in the order written (delivered again after a restart). */
  notes(): Promise<NoteRecord[]>;
  /** The highest request id ever given (request ids are unique across rooms); 0 when none. */
  maxRequestId(): Promise<number>;
}

/** A tool call a turn made, kept so that a turn taken again after a restart does not run it twice. */
export interface ToolRunRecord {
  readonly id: number;
  readonly tool: string;
  /** Canonical JSON of the arguments. */
  readonly args: string;
  readonly status: 'started' | 'ok' | 'refused' | 'failed';
  readonly input: string | null;
  readonly output: string | null;
}

export interface ToolJournal {
  /** The tool runs of a room's ask (its attempts). */
  runs(room: string, ask: number): Promise<ToolRunRecord[]>;
  started(room: string, ask: number, tool: string, args: string, at: number): Promise<number>;
  ended(id: number, result: { status: 'ok' | 'refused' | 'failed'; input: string; output: string }): Promise<void>;
}

export interface UsageRow {
  readonly agent: string;
  readonly calls: number;
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

export interface UsagePort {
  add(agent: string, room: string, usage: { input: number; cached: number; output: number }): Promise<void>;
  inRoom(room: string): Promise<UsageRow[]>;
  total(): Promise<UsageRow[]>;
}

export interface KnowledgeRow {
  readonly key: string;
  readonly value: string;
}

export interface KnowledgePort {
  list(agent: string): Promise<KnowledgeRow[]>;
  has(agent: string, key: string): Promise<boolean>;
  count(agent: string): Promise<number>;
  set(agent: string, key: string, value: string, at: number): Promise<void>;
  /** True when there was something to forget. */
  delete(agent: string, key: string): Promise<boolean>;
}

export interface ActionRow {
  readonly at: number;
  readonly room: string;
  readonly text: string;
}

export interface ActionPort {
  add(agent: string, room: string, text: string, at: number): Promise<void>;
  /** Newest first. */
  recent(agent: string, limit?: number): Promise<ActionRow[]>;
}

export interface EmbeddingPort {
  get(ids: readonly number[], model: string): Promise<Map<number, Float32Array>>;
  put(entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string): Promise<void>;
}

export type ChatRequestStatus = 'pending' | 'accepted' | 'declined' | 'expired';

/** A private agent-to-agent chat request. */
export interface ChatRequest {
  readonly id: number;
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly status: ChatRequestStatus;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** The sender was told it expired or was declined. */
  readonly senderTold: boolean;
}

export interface ChatPort {
  create(from: string, to: string, reason: string, now: number, ttlMs: number): Promise<ChatRequest>;
  get(id: number): Promise<ChatRequest | undefined>;
  setStatus(id: number, status: ChatRequestStatus): Promise<void>;
  markTold(id: number): Promise<void>;
  expire(now: number): Promise<void>;
  involving(agent: string): Promise<ChatRequest[]>;
}

/** Everything the bridge keeps. */
export interface StorePort {
  readonly rooms: RoomStore;
  readonly tools: ToolJournal;
  readonly usage: UsagePort;
  readonly knowledge: KnowledgePort;
  readonly actions: ActionPort;
  readonly embeddings: EmbeddingPort;
  readonly chats: ChatPort;
  /** Room leases (a server database several bridges may share); absent on SQLite. */
  readonly leases?: LeasePort;
  /** Events kept for the bridge serving their room (with leases); absent on SQLite. */
  readonly inbox?: InboxPort;
  /** Request ids for bridges sharing the store; absent on SQLite (one bridge numbers on from the highest stored). */
  readonly requestIds?: RequestIdBlocks;
  /** Proves the store can be written now (the health check); rejects with the reason when it cannot. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
