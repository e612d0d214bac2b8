/**
 * The running shell: starts and stops the adapters, offers them the sink, and waits for rooms to settle. Made by
 * createBridge (bridge.ts), which wires its parts.
 */
import type { Config } from '../config/index.js';
import type { EmbeddingWorker } from '../llm/embedding-worker.js';
import type { Logger } from '../log.js';
import type { AdapterSink, ChatAdapter, Sandbox } from '../ports.js';
import type { SpendMeter } from '../spend/meter.js';
import type { StorePort } from '../store/port.js';
import type { CatchUpMarks } from './inbound/catch-up-marks.js';
import type { RequestIds } from './loop/request-ids.js';
import { hasWork, resume } from './loop/resume.js';
import type { RoomActor } from './loop/room-actor.js';
import type { Rooms } from './loop/rooms.js';
import type { Handover } from './replicas/handover.js';
import type { LeaseKeeper } from './replicas/leases.js';
import type { ReplicaRegistry } from './replicas/registry.js';

export class Bridge {
  private stopped = false;

  constructor(
    readonly log: Logger,
    readonly sink: AdapterSink,
    private readonly parts: {
      readonly adapters: readonly ChatAdapter[];
      readonly store: StorePort;
      readonly rooms: Rooms;
      readonly marks: CatchUpMarks;
      readonly ids: Pick<RequestIds, 'start'>;
      /** Lets the rooms take their events (the adapters are connected). */
      readonly ready: () => void;
      readonly journal: StorePort['tools'];
      /** The rooms' leases, with bridges sharing the store. */
      readonly lease: LeaseKeeper | undefined;
      /** This bridge's row among the replicas sharing the store. */
      readonly registry: ReplicaRegistry | undefined;
      /** Takes up rooms and events other bridges left (with bridges sharing the store). */
      readonly handover: Handover | undefined;
      /** What a shutdown stops first: turns, timers, batched calls, inbound. */
      readonly stoppers: ReadonlyArray<() => void>;
      readonly sandbox: Sandbox;
      /** Spending limits: holds a stopped bridge left are spent at start. */
      readonly spend: Pick<SpendMeter, 'recover'>;
      /** Embeds stored messages in the background (EMBEDDINGS_MODEL set). */
      readonly embedding: EmbeddingWorker | undefined;
      /** Puts a configuration read again into force: the access policy, DM_POLICY, the agents' approvals. */
      readonly policy: { apply(config: Pick<Config, 'settings' | 'agents'>): void };
      /** Listens for what other bridges sharing the store tell this one; returns how to stop. */
      readonly listen: (() => () => Promise<void>) | undefined;
    },
  ) {}

  private unlisten: (() => Promise<void>) | undefined;

  /**
   * Loads every room with work a previous run left (its turn in flight is taken again, its unsent posts go out
   * first, its deadlines are set again), delivers the notes rooms had not taken, connects the adapters, then lets
   * them catch up on what was missed.
   */
  async start(): Promise<void> {
    const { store, rooms, adapters } = this.parts;
    // First: a replica that cannot run beside the live ones (bind workspaces on another engine) refuses to start.
    await this.parts.registry?.join();
    this.parts.lease?.start();
    const records = await store.rooms.all();
    await this.parts.spend.recover();
    await this.parts.ids.start(() => store.rooms.maxRequestId());
    await this.parts.marks.load(records, (platform) => store.rooms.active(platform));
    const adopted: RoomActor[] = [];
    for (const record of records) {
      if (!hasWork(record.state)) continue;
      const actor = await rooms.adopt(record);
      if (!actor) continue;
      adopted.push(actor);
      await resume(actor, record, this.parts.journal);
    }
    for (const note of await store.rooms.notes()) rooms.note(note);
    // What was stored without a vector (the endpoint was down, the bridge stopped) is embedded now, in the background.
    this.parts.embedding?.wake();
    for (const adapter of adapters) await adapter.start(this.sink);
    this.parts.ready();
    for (const adapter of adapters) {
      await adapter.catchUpRooms?.().catch((error: unknown) => this.log.warn({ err: error }, 'catch-up failed'));
    }
    // What the restart left waits until then (a room no adapter caught up is done now).
    for (const actor of adopted) void actor.deliver({ type: 'catch-up', phase: 'done' });
    this.parts.handover?.start();
    this.unlisten = this.parts.listen?.();
  }

  /** Stops every turn, then the adapters and the sandbox. The store stays open (its owner closes it). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const stop of this.parts.stoppers) stop();
    await this.unlisten?.();
    await this.parts.handover?.stop();
    for (const actor of this.parts.rooms.all()) actor.stop();
    // Nothing is decided here any more: other bridges may take these rooms at once, and take up their work.
    const busy = this.parts.rooms.all().filter((actor) => hasWork(actor.state));
    await this.parts.lease?.stop(new Set(busy.map((actor) => actor.record.id)));
    await this.parts.registry?.leave();
    for (const adapter of this.parts.adapters) {
      await adapter.stop().catch((error: unknown) => this.log.warn({ err: error }, 'adapter stop failed'));
    }
    await this.parts.sandbox.close().catch((error: unknown) => this.log.warn({ err: error }, 'sandbox close failed'));
  }

  /** With bridges sharing the store: this one's REPLICA_ID and how many rooms it holds now. */
  get leases(): { readonly replica: string; readonly held: number } | undefined {
    const { lease } = this.parts;
    return lease ? { replica: lease.replica, held: lease.count } : undefined;
  }

  /**
   * The access policy (ACCESS_*, DM_POLICY, agent files' `access:`) and the agents' approvals as read again from the
   * settings and agent files: in force from the next message or turn, without a restart. Nothing else changes.
   */
  applyPolicy(config: Pick<Config, 'settings' | 'agents'>): void {
    this.parts.policy.apply(config);
  }

  /** Resolves when every room has nothing queued or running. */
  idle(): Promise<void> {
    return this.parts.rooms.idle();
  }

  /** Resolves when every stored message has its vector (or the embeddings endpoint is failing). */
  embedded(): Promise<void> {
    return this.parts.embedding?.idle() ?? Promise.resolve();
  }
}
