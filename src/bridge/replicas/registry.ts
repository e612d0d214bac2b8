/**
 * With bridges sharing the store (replicas): this bridge's row in the registry of replicas. It is written at start,
 * marked seen with every renewal of the leases (every third of a lease), and removed at a clean stop; a replica not
 * seen within a lease is not live. At start, a bridge with bind workspaces refuses to run beside a live replica with
 * bind workspaces on another engine: a room moving between them would leave its files behind.
 */
import { hostname } from 'node:os';
import { ConfigError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Sandbox } from '../../ports.js';
import type { LeasePort, ReplicaInfo, ReplicaPort, ReplicaRecord } from '../../store/port.js';
import type { LiveReplicas } from '../views/status.js';

/** The live replica whose bind workspaces this one's cannot share (another engine), if any. */
export function bindClash(me: ReplicaInfo, others: readonly ReplicaInfo[]): ReplicaInfo | undefined {
  if (me.workspaces !== 'bind') return undefined;
  return others.find((other) => other.id !== me.id && other.workspaces === 'bind' && other.engine !== me.engine);
}

const engineName = (engine: string | null) => (engine === null ? 'no known engine' : `engine ${engine}`);

export interface ReplicaRegistryDeps {
  readonly replicas: ReplicaPort;
  /** REPLICA_ID, the host name and SANDBOX_WORKSPACES. */
  readonly me: Omit<ReplicaInfo, 'engine'>;
  /** The sandbox engine's identity (asked once, at start). */
  readonly engine: () => Promise<string | undefined>;
  /** ROOM_LEASE_S in ms: a replica not seen for this long is not live. */
  readonly ttlMs: number;
  readonly log: Logger;
}

export class ReplicaRegistry {
  private info: ReplicaInfo | undefined;

  constructor(private readonly deps: ReplicaRegistryDeps) {}

  get id(): string {
    return this.deps.me.id;
  }

  /** Records this replica; refuses (ConfigError naming SANDBOX_WORKSPACES) to run beside a replica it would clash with. */
  async join(): Promise<void> {
    const { replicas, me, ttlMs } = this.deps;
    const info: ReplicaInfo = { ...me, engine: (await this.deps.engine()) ?? null };
    // Written before the others are read: two replicas starting at once each see the other (and both refuse).
    await replicas.join(info);
    const clash = bindClash(info, await replicas.live(ttlMs));
    if (clash) {
      await replicas.leave(info.id).catch(() => undefined);
      throw new ConfigError(
        'environment',
        'SANDBOX_WORKSPACES',
        `bind on ${engineName(info.engine)} cannot run beside replica ${clash.id} (host ${clash.host}), which has bind ` +
          `workspaces on ${engineName(clash.engine)}: a room moving between them would leave its files behind; ` +
          'set SANDBOX_WORKSPACES=volume on one shared engine',
      );
    }
    this.info = info;
    this.deps.log.info({ replica: info.id, host: info.host, engine: info.engine }, 'replica registered');
  }

  /** Marks this replica seen (with the lease renewal); a failure is logged, and the next renewal tries again. */
  async beat(): Promise<void> {
    if (!this.info) return;
    await this.deps.replicas.beat(this.info).catch((error: unknown) => {
      this.deps.log.warn({ err: error }, 'marking this replica seen failed; trying again');
    });
  }

  /** The replicas seen within a lease. */
  live(): Promise<ReplicaRecord[]> {
    return this.deps.replicas.live(this.deps.ttlMs);
  }

  /** Whether this replica is seen within a lease. */
  async isLive(id: string): Promise<boolean> {
    return (await this.live()).some((replica) => replica.id === id);
  }

  /** A clean stop: this replica is no longer live at once. */
  async leave(): Promise<void> {
    if (!this.info) return;
    this.info = undefined;
    await this.deps.replicas.leave(this.deps.me.id).catch((error: unknown) => {
      this.deps.log.warn({ err: error }, 'removing this replica from the registry failed: it lapses on its own');
    });
  }
}

/** This bridge's registry, with bridges sharing the store (`replica`: its REPLICA_ID); none without them. */
export function registryFor(
  store: { readonly replicas?: ReplicaPort | undefined },
  replica: string | undefined,
  deps: Pick<ReplicaRegistryDeps, 'ttlMs' | 'log'> & {
    readonly workspaces: string;
    readonly sandbox: Pick<Sandbox, 'engine'>;
  },
): ReplicaRegistry | undefined {
  if (replica === undefined || !store.replicas) return undefined;
  return new ReplicaRegistry({
    replicas: store.replicas,
    me: { id: replica, host: hostname(), workspaces: deps.workspaces },
    engine: async () => deps.sandbox.engine?.(),
    ttlMs: deps.ttlMs,
    log: deps.log,
  });
}

/** The live replicas and how many rooms each holds now (for `/status`). */
export async function liveReplicas(registry: ReplicaRegistry, leases: LeasePort): Promise<LiveReplicas> {
  const [live, held] = await Promise.all([registry.live(), leases.holders()]);
  const rooms = new Map<string, number>();
  for (const lease of held) rooms.set(lease.holder, (rooms.get(lease.holder) ?? 0) + 1);
  return { live, rooms };
}
