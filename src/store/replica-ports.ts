/**
 * The store's ports for bridges sharing one database (replicas): room leases and their fencing tokens, the events,
 * notes and commands one bridge keeps for the rooms another serves, the signals that tell it, and request ids given in
 * blocks. SQLite has none of them (its one bridge serves every room) but the notes between rooms.
 */
import type { Logger } from '../log.js';
import type { Note } from '../room/events.js';

/** A note for a room, written by another room's decision and not yet taken. */
export interface NoteRecord {
  readonly id: string;
  readonly room: string;
  readonly note: Note;
}

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
  /**
   * The notes not yet taken whose room `holder` serves or no bridge does, in the order written (a note whose room
   * another live bridge serves is that bridge's to take).
   */
  notes(holder: string): Promise<NoteRecord[]>;
}

/** An operator command left in the store for the bridge serving its room. */
export interface WaitingCommand {
  /** `platform:` and the platform's id of the command. */
  readonly id: string;
  /** The command as the adapter gave it (JSON). */
  readonly event: string;
  /** REPLICA_ID of the bridge that claimed it (it answers the operator while live). */
  readonly receivedBy: string;
  /** The adapter's route to answer the operator from any bridge (a secret), if it gave one. */
  readonly reply: string | null;
}

/**
 * Operator commands claimed by their platform id, for bridges sharing the store (replicas): a command several bridges
 * receive is carried out once, by the bridge serving its room, and answered by the one that claimed it. SQLite has
 * none: its one bridge serves every room.
 */
export interface CommandClaimPort {
  /** Claims a command for `replica` (being carried out there); false when a bridge claimed it already. */
  claim(id: string, platform: string, channel: string, event: string, replica: string, at: number): Promise<boolean>;
  /**
   * Leaves a claimed command for the bridge serving its room; `reply`: the adapter's route to answer its operator from
   * any bridge (a secret, kept until the command is answered).
   */
  wait(id: string, reply?: string): Promise<void>;
  /** The commands waiting for rooms `holder` serves or no bridge does, oldest first. */
  waiting(holder: string): Promise<WaitingCommand[]>;
  /** Takes a waiting command to carry it out; false when another bridge took it first. */
  take(id: string): Promise<boolean>;
  /** Stores a command's answer. */
  answer(id: string, text: string): Promise<void>;
  /** A command's answer, once stored. */
  answerOf(id: string): Promise<string | undefined>;
  /** Forgets the commands received before `before` (ms since the epoch). */
  forget(before: number): Promise<void>;
}

/**
 * What one bridge sharing the store tells the others (replicas): an event, a note or a command was kept for a room
 * (the bridge serving it should look now), or a command's answer was stored. `reconnected`: the listening connection
 * is back after a drop, and what was told meanwhile may have been missed.
 */
export type StoreSignal =
  | { readonly kind: 'inbox' | 'note' | 'command' | 'reconnected' }
  | { readonly kind: 'answer'; readonly id: string };

/** Wake-ups between bridges sharing a server store (Postgres's LISTEN/NOTIFY); absent on SQLite. */
export interface StoreSignals {
  /**
   * Calls `on` with each signal until the returned function is called. The listening connection is opened again
   * after a drop, `backoff(tries)` ms after each failed try; it never throws.
   */
  listen(
    on: (signal: StoreSignal) => void,
    options: { readonly log: Logger; readonly backoff: (tries: number) => number },
  ): () => Promise<void>;
}

/** A bridge sharing the store (a replica), as it records itself. */
export interface ReplicaInfo {
  /** REPLICA_ID. */
  readonly id: string;
  /** The host name it runs on. */
  readonly host: string;
  /** Its sandbox engine's identity (Docker's engine ID); null when none is known. */
  readonly engine: string | null;
  /** SANDBOX_WORKSPACES: bind or volume. */
  readonly workspaces: string;
}

export interface ReplicaRecord extends ReplicaInfo {
  /** When it started and when it was last seen (ms since the epoch, the database's clock). */
  readonly startedAt: number;
  readonly seenAt: number;
}

/**
 * The registry of the bridges sharing the store (replicas): each records itself at start and is marked seen with
 * every renewal of its leases, so the others know which are live. SQLite has none: its one bridge is alone.
 */
export interface ReplicaPort {
  /** Records the replica as started now (its previous run's row, under the same id, replaced). */
  join(replica: ReplicaInfo): Promise<void>;
  /** Marks the replica seen now (its row written again when it is missing). */
  beat(replica: ReplicaInfo): Promise<void>;
  /** The replicas seen within `liveMs` (the database's clock), by id. */
  live(liveMs: number): Promise<ReplicaRecord[]>;
  /** Forgets the replica (a clean stop, or a start refused). */
  leave(id: string): Promise<void>;
}

/** Blocks of request ids from a store several bridges share, so no two bridges give the same id. */
export interface RequestIdBlocks {
  /** A block of fresh ids: `first` and the `count` that follow it. */
  reserve(): Promise<{ first: number; count: number }>;
}
