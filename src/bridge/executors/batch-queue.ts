import { packBatch } from '../../llm/batch.js';

/** One agent due for a batched turn. */
export interface QueuedTurn {
  /** Turns share a call only within a group: same endpoint, model and key, same room, same visible history. */
  readonly group: string;
  readonly contextTokens: number;
  /** The shared part of its group's batch, and its own segment, as counted. */
  readonly sharedTokens: number;
  readonly segmentTokens: number;
  /** False once its turn is withdrawn (stopped, a human spoke, the round ended): dropped at the tick. */
  wanted(): boolean;
}

export interface BatchQueueOptions<T extends QueuedTurn> {
  /** BATCH_TICK_MS: the heartbeat. */
  readonly tickMs: number;
  /** BATCH_RESERVE_TOKENS: kept free for the batch's answer. */
  readonly reserve: number;
  /** Sends one batch (two turns or more) and settles each of them; never rejects. */
  readonly send: (batch: T[]) => Promise<void>;
  /** A turn that goes on its own, at once: a lone agent, or one that fits no batch. */
  readonly alone: (turn: T) => void;
  /** A turn no longer wanted, dropped at the tick. */
  readonly drop: (turn: T) => void;
  /** Starts the heartbeat; returns its stop (tests drive ticks by hand). */
  readonly every?: ((ms: number, tick: () => void) => () => void) | undefined;
}

function heartbeat(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, ms);
  timer.unref(); // a heartbeat alone never keeps the process up
  return () => clearInterval(timer);
}

/**
 * seed 004's heartbeat: agents due for a turn are queued, and on each tick the queue is grouped (FIFO within a
 * group), each group packed within the smallest budget among its agents less the reserve, and the batches sent in
 * parallel (one call at a time per group: the rest of a group waits for its call, whose answer may end their round);
 * what does not fit waits, in order, for the next tick. An empty queue makes no call, and a lone agent
 * with nothing queued that it could join is sent at once: batching never delays a one-agent turn.
 */
export class BatchQueue<T extends QueuedTurn> {
  private queue: T[] = [];
  private readonly stopBeat: () => void;
  /** Queued turns are work in flight: while any wait for a tick, the process is kept running (the heartbeat is not). */
  private keepAlive: NodeJS.Timeout | undefined;
  /** Groups with a call out: their other turns wait for it (its answer may end their round). */
  private readonly out = new Set<string>();

  constructor(private readonly options: BatchQueueOptions<T>) {
    this.stopBeat = (options.every ?? heartbeat)(options.tickMs, () => this.tick());
  }

  /** The turns of one round that may share a call. */
  submit(turns: readonly T[]): void {
    const [first] = turns;
    if (turns.length === 1 && first && !this.queue.some((t) => t.group === first.group && t.wanted())) {
      this.options.alone(first);
      return;
    }
    this.queue.push(...turns);
    this.keepAlive ??= setInterval(() => {}, 60_000);
  }

  private sleep(): void {
    if (this.queue.length > 0 || !this.keepAlive) return;
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  /** Turns waiting for the next tick. */
  get waiting(): number {
    return this.queue.length;
  }

  tick(): void {
    const live = this.queue.filter((turn) => {
      if (turn.wanted()) return true;
      this.options.drop(turn);
      return false;
    });
    if (live.length === 0) {
      this.queue = [];
      this.sleep();
      return;
    }
    const groups = new Map<string, T[]>();
    for (const turn of live) groups.set(turn.group, [...(groups.get(turn.group) ?? []), turn]);
    const waiting = new Set<T>();
    const sends: Array<Promise<void>> = [];
    for (const [group, turns] of groups) {
      if (this.out.has(group)) {
        for (const turn of turns) waiting.add(turn);
        continue;
      }
      const cost = { shared: turns[0]?.sharedTokens ?? 0, segment: (turn: T) => turn.segmentTokens };
      const { batch, rest } = packBatch(turns, cost, this.options.reserve);
      if (batch.length >= 2) {
        this.out.add(group);
        sends.push(this.options.send(batch).finally(() => this.out.delete(group)));
        for (const turn of rest) waiting.add(turn);
        continue;
      }
      // One turn alone is no batch: it goes on its own (it fits no batch, or nothing else is due with it).
      const [first, ...others] = turns;
      if (first) this.options.alone(first);
      for (const turn of others) waiting.add(turn);
    }
    this.queue = live.filter((turn) => waiting.has(turn));
    this.sleep();
    void Promise.all(sends);
  }

  /** Stops the heartbeat; turns still queued are dropped. */
  stop(): void {
    this.stopBeat();
    for (const turn of this.queue.splice(0)) this.options.drop(turn);
    this.sleep();
  }
}
