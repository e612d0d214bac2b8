/**
 * The store port: everything the bridge keeps, behind Promise-based interfaces, so the embedded SQLite store and a
 * server database implement the same contract. A room's decision is committed in one call (`RoomStore.commit`): its
 * messages, its state and its requests and notes are stored together, or not at all. No routing, model call or
 * platform I/O ever runs inside a store call.
 */
import type { DecisionRecord, RequestRow, Write } from '../room/effects.js';
import type { ChatRequest, ChatRequestStatus, ToolRun } from '../room/events.js';
import type { Place } from '../room/privacy.js';
import type { RoomState } from '../room/state.js';
import type { MessageTokens, RoomMessage } from '../room/types.js';
import type {
  CommandClaimPort,
  Fence,
  InboxPort,
  LeasePort,
  NoteRecord,
  ReplicaPort,
  RequestIdBlocks,
  StoreSignals,
} from './replica-ports.js';

// The ports of bridges sharing one store (replicas), and the notes between rooms they pass on: in replica-ports.ts.
export type {
  CommandClaimPort,
  Fence,
  InboxEvent,
  InboxPort,
  Lease,
  LeasePort,
  NoteRecord,
  ReplicaInfo,
  ReplicaPort,
  ReplicaRecord,
  RequestIdBlocks,
  StoreSignal,
  StoreSignals,
  WaitingCommand,
} from './replica-ports.js';

export type {
  AbandonedHolds,
  ReserveResult,
  SpendPort,
  SpendRow,
  SpendScope,
} from './spend-port.js';

import type { AccessPort } from './access-port.js';
import type { SpendPort } from './spend-port.js';

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

export type CommitResult = 'done' | 'duplicate';

/** A stored message as a transcript shows it: its row id (the page cursor), platform id and seq with it. */
export interface TranscriptRow {
  /** The row id: messages of a room are in this order; a page of older ones is asked for `before` one. */
  readonly id: number;
  /** The platform's id of the message (its first, for a reply posted in several parts). */
  readonly platformId: string | null;
  readonly seq: number | null;
  readonly author: string;
  readonly kind: 'human' | 'agent' | 'system';
  readonly text: string;
  readonly toolRuns: readonly ToolRun[];
  readonly at: number;
}

/** One record of why a room decided as it did, by the message it is about. */
export interface DecisionRow {
  /** The seq of the message it is about. */
  readonly seq: number;
  readonly record: DecisionRecord;
  readonly at: number;
}

export interface RoomStore {
  /**
   * The room's row, created on first sight (with its state as stored, or null when new). A row that cannot be
   * written rejects with a StoreError that says whether to try again (`retryable`), as `commit` does.
   */
  open(platform: string, channel: string, directAgent?: string): Promise<RoomRecord>;
  /** Every room the store knows, in the order they were first seen. */
  all(): Promise<RoomRecord[]>;
  /**
   * Stores one decision: its writes and the room's new state, in one transaction. When a message it stores has a
   * platform id the room already has, or a note it takes (`note-done`) was taken already, nothing is stored and the
   * result is `duplicate`. `open` and `all` return the
   * state last committed (after a restart too). A decision that cannot be stored rejects with a StoreError:
   * `retryable` when the store cannot write now (a full disk, a lock held too long), so the same decision may be
   * tried again later; not when it would be refused again. `stored`, when given, receives the row ids of the messages
   * the decision stored, in the order of its writes (only meaningful when the result is `done`).
   */
  commit(
    roomId: number,
    writes: readonly Write[],
    state: RoomState,
    fence?: Fence,
    stored?: number[],
  ): Promise<CommitResult>;
  /** The room's newest `limit` messages, oldest first. */
  history(roomId: number, limit: number): Promise<RoomMessage[]>;
  /** Keeps token counts with stored messages (a message no longer stored is skipped; an encoding not given stays). */
  keepTokens(counts: ReadonlyArray<{ readonly id: number; readonly tokens: MessageTokens }>): Promise<void>;
  /** A page of the room's messages for a transcript: the newest `limit` before row id `before` (or the newest), oldest first. */
  transcript(
    roomId: number,
    page: { readonly before?: number | undefined; readonly limit: number },
  ): Promise<TranscriptRow[]>;
  /** The decision records about the messages with seq `from` to `to` (inclusive), in the order they were made. */
  decisions(roomId: number, from: number, to: number): Promise<DecisionRow[]>;
  /** The stored message a platform id belongs to (any chunk of it). */
  byPlatformId(roomId: number, platformId: string): Promise<RoomMessage | undefined>;
  /** Whether this platform id is stored in the room already. */
  seen(roomId: number, platformId: string): Promise<boolean>;
  /** The agents a stored message and its stored edits (`<id>:edit:…`) addressed; undefined when not stored. */
  addressedBy(roomId: number, platformId: string): Promise<string[] | undefined>;
  /** Forgets a room's messages; their platform ids stay known (nothing is answered twice). */
  clear(roomId: number): Promise<void>;
  /** The newest platform message id stored for a room, never an edit's (where a catch-up starts without a mark). */
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
  /** How the call is shown: the shell command, or the arguments (null only for a call an earlier version journaled). */
  readonly input: string | null;
  readonly output: string | null;
}

export interface ToolJournal {
  /** The tool runs of a room's ask (its attempts). */
  runs(room: string, ask: number): Promise<ToolRunRecord[]>;
  /** A call about to run: its canonical arguments, and how it is shown until it ends (`input`). */
  started(room: string, ask: number, tool: string, args: string, at: number, input: string): Promise<number>;
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

/**
 * Each agent's knowledge, kept by the place it was learnt in (a room, and under privacy the exchange's audience):
 * it is listed, found and forgotten only where that place may be shown (`shownAt`), so a DM's stays in the DM.
 */
export interface KnowledgePort {
  /** What the agent may be shown at `here`, in key order. */
  list(agent: string, here: Place): Promise<KnowledgeRow[]>;
  /** Whether the agent remembered `key` at exactly this place. */
  has(agent: string, place: Place, key: string): Promise<boolean>;
  /** How many entries the agent keeps in this room (every exchange of it). */
  count(agent: string, room: string): Promise<number>;
  set(agent: string, place: Place, key: string, value: string, at: number): Promise<void>;
  /** Forgets `key` wherever it is shown at `here`; true when there was something to forget. */
  delete(agent: string, here: Place, key: string): Promise<boolean>;
}

export interface ActionRow {
  readonly at: number;
  readonly room: string;
  readonly text: string;
}

/** Each agent's recent actions, kept with the place they happened in and shown only where it may be (`shownAt`). */
export interface ActionPort {
  add(agent: string, place: Place, text: string, at: number): Promise<void>;
  /** The newest actions the agent may be shown at `here`, newest first. */
  recent(agent: string, here: Place, limit?: number): Promise<ActionRow[]>;
}

/** A stored message with no vector for a model yet (the embeddings backlog). */
export interface PendingEmbedding {
  readonly id: number;
  /** The room's key, `platform:channel` (whose spending an embeddings call counts against). */
  readonly room: string;
  readonly text: string;
}

/** A search over one room's vectors: those of public messages and of the private audiences given. */
export interface VectorQuery {
  readonly roomId: number;
  readonly model: string;
  readonly vector: Float32Array;
  /** The private audiences whose messages may be returned (as the messages store them); public ones always may. */
  readonly audiences: ReadonlyArray<readonly string[]>;
  /** Only messages stored before this message id (the ones a turn's history window does not show). */
  readonly before: number;
  readonly limit: number;
}

/** Message vectors (one per message and model), kept with their message's room and audience. */
export interface EmbeddingPort {
  get(ids: readonly number[], model: string): Promise<Map<number, Float32Array>>;
  /** Stores (or replaces) the vectors of stored messages; a message no longer stored is skipped. */
  put(entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string): Promise<void>;
  /** Up to `limit` human and agent messages with an id above `after` and no vector for `model`, oldest first. */
  pending(model: string, after: number, limit: number): Promise<PendingEmbedding[]>;
  /** The distinct audiences of the room's private messages that have a vector for `model`. */
  audiences(roomId: number, model: string): Promise<string[][]>;
  /** The messages most like the query's vector (cosine similarity), most similar first. */
  search(query: VectorQuery): Promise<Array<{ message: RoomMessage; score: number }>>;
}

/** A block of a room's history: its messages with ids in [firstId, firstId + width), and what stands for it. */
export interface BlockSummary {
  readonly firstId: number;
  readonly width: number;
  /** How many of the room's messages the block holds. */
  readonly messages: number;
  readonly model: string;
  /** Null: the block is not summarised (a message in it has a privacy audience). */
  readonly summary: string | null;
}

export interface SummaryPort {
  /** The room's stored block summaries of this width whose blocks end at or before `before` (an id), oldest first. */
  before(room: string, width: number, before: number): Promise<BlockSummary[]>;
  /** Stores a block's summary unless one is stored already; false then (the first one stays). */
  put(room: string, summary: BlockSummary, at: number): Promise<boolean>;
  /** The room's messages with ids in [from, to), every audience, oldest first (what a block holds). */
  block(room: string, from: number, to: number): Promise<RoomMessage[]>;
}

export type { ChatRequest, ChatRequestStatus } from '../room/events.js';

/**
 * The private chat requests of every pair room, read across pairs (an agent's briefing, look, /status). Each pair room
 * writes its own with its decisions (`chat-request` writes); `create`, `setStatus` and `markTold` are for tests and
 * tools that set rows up by hand.
 */
export interface ChatPort {
  /**
   * The id a new request gets, if its pair room makes it: the next after the highest stored (SQLite: ask one at a
   * time), or the next of the table's identity (Postgres, shared by bridges: a request refused leaves a gap).
   */
  nextId(): Promise<number>;
  create(from: string, to: string, reason: string, now: number, ttlMs: number): Promise<ChatRequest>;
  get(id: number): Promise<ChatRequest | undefined>;
  setStatus(id: number, status: ChatRequestStatus): Promise<void>;
  markTold(id: number): Promise<void>;
  expire(now: number): Promise<void>;
  involving(agent: string): Promise<ChatRequest[]>;
}

/** A person of the web room (invited with `npm run web:invite`). */
export interface WebPerson {
  readonly name: string;
  readonly operator: boolean;
  readonly createdAt: number;
  /** Sessions not ended and not expired. */
  readonly sessions: number;
  /** When one of their sessions was last used; undefined when never. */
  readonly seenAt?: number | undefined;
}

/** Who a session or a sign-in code belongs to. */
export interface WebIdentity {
  readonly name: string;
  readonly operator: boolean;
}

/** An operator's MCP token as the store keeps it. */
export interface McpToken {
  readonly secretHash: string;
  readonly person: WebIdentity;
}

/**
 * The web room's people: one-time sign-in codes and sessions. Codes and tokens are given and looked up as digests
 * (the caller hashes them); nothing here sees what a link or a cookie carries.
 */
export interface PeoplePort {
  /** Adds the person (or sets their operator flag) and a sign-in code valid until `expiresAt`. */
  invite(person: WebIdentity, codeHash: string, now: number, expiresAt: number): Promise<void>;
  /** Whose code this is, while it is unused and unexpired; the code stays valid. */
  invited(codeHash: string, now: number): Promise<WebIdentity | undefined>;
  /**
   * Uses the code (once: a second call finds nothing) and opens a session for its person, in one transaction;
   * undefined when the code is unknown, used or expired.
   */
  redeem(codeHash: string, tokenHash: string, now: number, expiresAt: number): Promise<WebIdentity | undefined>;
  /**
   * The session's person while it is open, unexpired and was used at `idleSince` or later (marks it used now; a use
   * is written at most once a minute).
   */
  session(tokenHash: string, now: number, idleSince?: number): Promise<WebIdentity | undefined>;
  /** Ends one session (sign-out). */
  endSession(tokenHash: string): Promise<void>;
  /** Ends every session of a person and drops their unused codes and MCP tokens; how many sessions were ended. */
  revoke(name: string): Promise<number>;
  /** Adds an MCP token (its id and its secret's digest) for a person; false when nobody has that name. */
  addToken(name: string, id: string, secretHash: string, now: number): Promise<boolean>;
  /**
   * The MCP token with this id: its secret's digest (the caller compares) and its person as they are now; marks it
   * used (at most one write a minute). Undefined when there is no such token.
   */
  token(id: string, now: number): Promise<McpToken | undefined>;
  /** Deletes every MCP token of a person; how many there were. */
  revokeTokens(name: string): Promise<number>;
  /** Everyone invited, by name. */
  list(now: number): Promise<WebPerson[]>;
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
  readonly spend: SpendPort;
  readonly people: PeoplePort;
  /** DM pairing (DM_POLICY=pair). */
  readonly access: AccessPort;
  readonly summaries: SummaryPort;
  /** Room leases (a server database several bridges may share); absent on SQLite. */
  readonly leases?: LeasePort;
  /** Events kept for the bridge serving their room (with leases); absent on SQLite. */
  readonly inbox?: InboxPort;
  /** The registry of the bridges sharing the store; absent on SQLite. */
  readonly replicas?: ReplicaPort;
  /** Wake-ups between bridges sharing the store (with leases); absent on SQLite. */
  readonly signals?: StoreSignals;
  /** Operator commands claimed once by their platform id (with leases); absent on SQLite. */
  readonly commands?: CommandClaimPort;
  /** Request ids for bridges sharing the store; absent on SQLite (one bridge numbers on from the highest stored). */
  readonly requestIds?: RequestIdBlocks;
  /** Proves the store can be written now (the health check); rejects with the reason when it cannot. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
