/**
 * Embeds every stored message once, in the background: recall searches a room's whole history, so each message
 * needs its vector, and a turn must never wait for one. A pass walks the backlog (stored human and agent messages
 * without a vector for the model, oldest first) in batches of EMBEDDINGS_BATCH, at most EMBEDDINGS_CONCURRENCY
 * calls at once, each room's calls held against that room's spending limits. A pass runs at start (what was stored
 * while the endpoint was down or the bridge stopped) and whenever messages are stored. A failing endpoint (429,
 * 5xx, no answer) is retried after a wait that doubles up to a cap (or what the server asked for); a room over a
 * spending limit is left until its limit lifts. With bridges sharing the store (replicas), each embeds only the
 * messages of the rooms it serves, so no message is embedded (and paid) twice. Nothing here can fail a turn.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { EmbeddingPort, PendingEmbedding } from '../store/port.js';
import type { Embedder, EmbedMeter } from './embeddings.js';

/** A model call that a spending limit refused: the room waits until `until` (ms since the epoch). */
export interface LimitRefusal {
  readonly until: number;
}

export interface EmbeddingWorkerDeps {
  readonly embedder: Embedder;
  readonly vectors: Pick<EmbeddingPort, 'pending' | 'put'>;
  /** Spending limits of a room's embeddings (none: not held). */
  readonly meter?: ((room: string) => EmbedMeter | undefined) | undefined;
  /** When an error is a spending limit's refusal: until when (else undefined). */
  readonly refusal?: ((error: unknown) => LimitRefusal | undefined) | undefined;
  /**
   * With bridges sharing the store: whether this bridge serves the room (holds its lease). Each embeds only its
   * rooms' messages, so no message is embedded (and paid) twice. Absent: every room is this bridge's.
   */
  readonly serves?: ((room: string) => boolean) | undefined;
  /** EMBEDDINGS_BATCH: inputs per call. */
  readonly batch: number;
  /** EMBEDDINGS_CONCURRENCY: calls at once. */
  readonly concurrency: number;
  /** The first wait after a failure, and the longest. */
  readonly backoff?: { readonly firstMs: number; readonly maxMs: number } | undefined;
  readonly clock?: (() => number) | undefined;
  readonly log: Logger;
}

const BACKOFF = { firstMs: 1000, maxMs: 5 * 60_000 };

/** The wait a server asked for (OpenAI SDK errors carry the response headers), in ms. */
function retryAfterMs(error: unknown): number | undefined {
  const headers = (error as { headers?: unknown }).headers;
  const value =
    headers instanceof Headers
      ? headers.get('retry-after')
      : typeof headers === 'object' && headers !== null
        ? (headers as Record<string, string | undefined>)['retry-after']
        : undefined;
  const seconds = Number(value);
  return value !== undefined && value !== null && Number.isFinite(seconds) ? seconds * 1000 : undefined;
}

export class EmbeddingWorker {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private failing = false;
  private wait = new AbortController();
  /** Rooms over a spending limit, until when. */
  private readonly paused = new Map<string, number>();
  private embeddedCount = 0;
  /** Waiting for the worker to rest: the backlog done, or a failure it waits out. */
  private resting: Array<() => void> = [];

  constructor(private readonly deps: EmbeddingWorkerDeps) {}

  /** Messages embedded since start. */
  get embedded(): number {
    return this.embeddedCount;
  }

  /** Runs a pass now, or once more after the one under way (messages were stored). */
  wake(): void {
    if (this.stopped) return;
    this.again = true;
    if (!this.running) {
      this.running = this.loop().finally(() => {
        this.running = undefined;
        this.rest();
      });
    }
  }

  /** Resolves when the backlog is done (or the endpoint is failing and the worker waits to try again). */
  idle(): Promise<void> {
    if (!this.running || this.failing) return Promise.resolve();
    return new Promise((resolve) => this.resting.push(resolve));
  }

  private rest(): void {
    const waiting = this.resting;
    this.resting = [];
    for (const resolve of waiting) resolve();
  }

  stop(): void {
    this.stopped = true;
    this.wait.abort();
  }

  private async loop(): Promise<void> {
    const backoff = this.deps.backoff ?? BACKOFF;
    let delay = backoff.firstMs;
    while (this.again && !this.stopped) {
      this.again = false;
      try {
        await this.pass();
        if (this.failing) this.deps.log.info({ model: this.deps.embedder.model }, 'embedding the backlog again');
        this.failing = false;
        delay = backoff.firstMs;
      } catch (error) {
        if (!this.failing) {
          this.deps.log.warn(
            { model: this.deps.embedder.model, err: describeError(error) },
            'embedding stored messages failed: trying again later',
          );
        }
        this.failing = true;
        this.rest();
        const wait = Math.min(backoff.maxMs, Math.max(delay, retryAfterMs(error) ?? 0));
        delay = Math.min(backoff.maxMs, delay * 2);
        this.again = true;
        await sleep(wait, undefined, { signal: this.wait.signal, ref: false }).catch(() => {});
      }
    }
  }

  /** One walk over the backlog; throws when the endpoint fails (the pass is taken again after a wait). */
  private async pass(): Promise<void> {
    const { batch, concurrency, vectors, embedder } = this.deps;
    const page = batch * concurrency;
    let after = 0;
    for (;;) {
      if (this.stopped) return;
      const rows = await vectors.pending(embedder.model, after, page);
      if (rows.length === 0) return;
      after = rows.at(-1)?.id ?? after;
      const now = (this.deps.clock ?? Date.now)();
      const byRoom = new Map<string, PendingEmbedding[]>();
      for (const row of rows) {
        if ((this.paused.get(row.room) ?? 0) > now) continue;
        if (this.deps.serves && !this.deps.serves(row.room)) continue;
        byRoom.set(row.room, [...(byRoom.get(row.room) ?? []), row]);
      }
      const calls: PendingEmbedding[][] = [];
      for (const group of byRoom.values()) {
        for (let i = 0; i < group.length; i += batch) calls.push(group.slice(i, i + batch));
      }
      let failure: unknown;
      const next = () => calls.shift();
      await Promise.all(
        Array.from({ length: Math.min(concurrency, calls.length) }, async () => {
          for (let call = next(); call && failure === undefined && !this.stopped; call = next()) {
            try {
              await this.embed(call);
            } catch (error) {
              failure ??= error;
            }
          }
        }),
      );
      if (failure !== undefined) throw failure;
      if (rows.length < page) return;
    }
  }

  private async embed(rows: readonly PendingEmbedding[]): Promise<void> {
    const { embedder, vectors } = this.deps;
    const room = rows[0]?.room ?? '';
    let fresh: Float32Array[];
    try {
      fresh = await embedder.embed(
        rows.map((row) => row.text),
        this.deps.meter?.(room),
      );
    } catch (error) {
      const refusal = this.deps.refusal?.(error);
      if (!refusal) throw error;
      this.paused.set(room, refusal.until);
      this.deps.log.info(
        { room, until: new Date(refusal.until).toISOString() },
        'embedding paused by a spending limit',
      );
      return;
    }
    await vectors.put(
      rows.map((row, i) => ({ id: row.id, vector: fresh[i] ?? new Float32Array() })),
      embedder.model,
    );
    this.embeddedCount += rows.length;
  }
}
