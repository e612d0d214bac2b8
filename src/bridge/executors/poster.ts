/**
 * Carries out the `post` effect: the post goes out through the right identity (an agent's own bot, or the bridge),
 * with an idempotency key from the room and the post's id, finishing the reply's streamed preview when one is shown;
 * the platform's ids (or its refusal) go back to the room. A post that fails for a reason that passes (5xx, 429, a
 * dropped connection) is tried again, with growing waits up to a ceiling, for as long as it takes: it stays in the
 * room's state meanwhile (so a restart tries it again too) until it is posted, refused for good, or dropped by an
 * operator (`drop`). Echoes of a post wait here until it is recorded.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdapterError, describeError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { metrics } from '../../metrics.js';
import type { PostButton } from '../../ports.js';
import type { PendingPost } from '../../room/state.js';
import { redact } from '../../secrets.js';
import { type PostTrace, tracePost } from '../../trace/post.js';
import type { Backoff } from '../backoff.js';
import type { RoomHandle } from '../loop/room-handle.js';
import type { Previews } from './previews.js';

/** The idempotency key of a post: room, post and time, so that two databases never share one (<= 20 characters). */
export function postKey(roomId: number, post: Pick<PendingPost, 'id' | 'at'>): string {
  return `${roomId.toString(36)}.${post.id.toString(36)}.${post.at.toString(36)}`.slice(0, 20);
}

/**
 * One try's own signal, aborted with the post's: the SDKs add an abort listener to the signal of every request they
 * make and never take it off, so a post tried for hours must not lend them its long-lived one.
 */
function tryOf(post: AbortSignal): { readonly signal: AbortSignal; end(): void } {
  const attempt = new AbortController();
  // A reply of several chunks, each retried by the SDK, adds more than the default ten listeners to one try.
  setMaxListeners(0, attempt.signal);
  const abort = () => attempt.abort();
  post.addEventListener('abort', abort, { once: true });
  return { signal: attempt.signal, end: () => post.removeEventListener('abort', abort) };
}

/** An approval card's answers, as buttons under its post. */
function buttonsOf(post: PendingPost): { buttons?: PostButton[] } {
  const card = post.card?.id;
  return card
    ? {
        buttons: [
          { action: 'approve', card },
          { action: 'deny', card },
        ],
      }
    : {};
}

/** A post that failed and waits for its next try (for /status). */
export interface WaitingPost {
  readonly post: PendingPost;
  /** Failed tries so far, since when, the last reason, and when the next try is due (ms since the epoch). */
  readonly tries: number;
  readonly since: number;
  readonly reason: string;
  readonly next: number;
}

/**
 * Whether a failed post is worth another try: the adapter says (AdapterError.retryable); anything it did not classify
 * (an error on the way there) is taken as passing, so that nothing is given up by mistake.
 */
export function retryable(error: unknown): boolean {
  return error instanceof AdapterError ? error.retryable : true;
}

/** How many of a room's newest posted platform ids the poster keeps, to know their echoes. */
const ECHOES_KEPT = 64;

export class Poster {
  /** Each room's newest platform ids this bridge posted (oldest first): their echoes are not news. */
  private readonly posted = new Map<string, string[]>();
  /** Posts under way per room, until the room has their outcome. */
  private readonly inFlight = new Map<string, Set<Promise<void>>>();
  /** Each post under way (`room#post`): what stops it, and its failed tries. */
  private readonly posts = new Map<string, { readonly stop: AbortController; waiting?: WaitingPost }>();
  private stopped = false;
  /** The adapters are connected: posts go out. */
  private started = false;

  constructor(
    private readonly deps: {
      /** The replies' previews, if shown (taken: the post finishes it). */
      readonly previews: Pick<Previews, 'take'>;
      /** Resolves once the adapters are connected (posts a restart left wait for it, in order). */
      readonly ready: Promise<void>;
      /** The waits between tries. */
      readonly backoff: Backoff;
      /**
       * Whether this bridge may still act for the room (with replicas: surely within its lease). A post a bridge that
       * lost the room was still trying is left to the room's new holder, which sends it from the outbox.
       */
      readonly serving?: ((roomId: number) => boolean) | undefined;
      readonly clock: () => number;
      readonly log: Logger;
    },
  ) {
    void deps.ready.then(() => {
      this.started = true;
    });
  }

  /** Whether the room has posts that wait for the adapters to connect (a restart left them). */
  beforeStart(room: string): boolean {
    return !this.started && (this.inFlight.get(room)?.size ?? 0) > 0;
  }

  send(room: RoomHandle, post: PendingPost, resend = false): void {
    const id = `${room.key}#${post.id}`;
    if (this.stopped || this.posts.has(id)) return;
    const stop = new AbortController();
    this.posts.set(id, { stop });
    const traced = tracePost(room, post, resend);
    const work = this.post(room, post, resend, stop.signal, traced)
      .then((outcome) => traced?.end(outcome))
      .finally(() => this.forget(id));
    const set = this.inFlight.get(room.key) ?? new Set();
    set.add(work);
    this.inFlight.set(room.key, set);
    void work.finally(() => set.delete(work));
  }

  /** An operator dropped the post: it is not tried again (a try under way is cut off). */
  drop(room: string, post: number): void {
    this.posts.get(`${room}#${post}`)?.stop.abort();
  }

  /** The room's posts that failed and wait for another try, oldest first. */
  waiting(room: string): WaitingPost[] {
    const list: WaitingPost[] = [];
    for (const [id, entry] of this.posts) if (id.startsWith(`${room}#`) && entry.waiting) list.push(entry.waiting);
    return list.sort((a, b) => a.post.id - b.post.id);
  }

  /** A shutdown: no more tries (what was not posted stays in the rooms' state, for the next start). */
  stop(): void {
    this.stopped = true;
    for (const entry of this.posts.values()) entry.stop.abort();
  }

  /**
   * Whether this platform id is one of the room's posts, given to this bridge by the platform when it posted it: its
   * echo is dropped before the room sees it (the room recorded the post with that id already).
   */
  isEcho(room: string, platformId: string): boolean {
    return this.posted.get(room)?.includes(platformId) === true;
  }

  /** Resolves when the room's posts under way have their outcome (an echo is then recognised as stored). */
  async settled(room: string): Promise<void> {
    const set = this.inFlight.get(room);
    if (set && set.size > 0) await Promise.allSettled([...set]);
  }

  /** Sends the post until it is posted or refused for good; says how it ended (its trace reads it). */
  private async post(
    room: RoomHandle,
    post: PendingPost,
    resend: boolean,
    signal: AbortSignal,
    traced: PostTrace | undefined,
  ): Promise<string> {
    // The bridge's lines quote what servers said: known secrets never reach the room.
    const text = post.agent === null ? redact(post.text) : post.text;
    let stream = post.ask !== undefined ? this.deps.previews.take(room.key, post.ask) : undefined;
    const platform = room.platform;
    // Its lines lead to its trace (the ids are bound here: no asynchronous context carries them).
    const log = traced ? this.deps.log.child(traced.logFields) : this.deps.log;
    await this.deps.ready;
    for (let tries = 0; ; ) {
      if (signal.aborted) return 'dropped';
      // A room another bridge serves now (this one lost its lease, paused or cut off): its holder posts it.
      if (this.stopped || this.deps.serving?.(room.id) === false) {
        log.info({ room: room.key, post: post.id, tries }, 'the room is served elsewhere: its post is left to it');
        return 'elsewhere';
      }
      let ids: readonly string[];
      const attempt = tryOf(signal);
      try {
        const posted = stream
          ? await stream.finish(text)
          : await room.adapter.post(
              { channel: room.channel, agent: post.agent, text, ...buttonsOf(post) },
              {
                key: postKey(room.id, post),
                signal: attempt.signal,
                // Tried before (by this run or the last): what already reached the platform is not posted again.
                ...(resend || tries > 0 ? { resendSince: post.at } : {}),
              },
            );
        ids = posted.messageIds;
      } catch (error) {
        if (signal.aborted) return 'dropped';
        stream = undefined; // a preview that failed to finish: the next try posts the reply whole
        tries += 1;
        if (!retryable(error)) {
          log.error({ err: error, room: room.key, agent: post.agent, tries }, 'posting failed');
          metrics.postsRefused.inc({ platform });
          void room.report({ type: 'post-failed', post: post.id, reason: redact(describeError(error)) });
          return 'refused';
        }
        const retryAfter = error instanceof AdapterError ? error.retryAfterMs : undefined;
        const wait = Math.max(this.deps.backoff(tries), retryAfter ?? 0);
        this.failedTry(room.key, post, tries, error, wait, log);
        traced?.retry(tries, wait, retryAfter, redact(describeError(error)));
        metrics.postRetries.inc({ platform });
        await sleep(wait, undefined, { signal }).catch(() => undefined);
        continue;
      } finally {
        attempt.end();
      }
      // Queued for the room now; the echo of the post, which waits for `settled`, comes after it.
      this.remember(room.key, ids);
      void room.report({ type: 'posted', post: post.id, platformIds: ids });
      return 'posted';
    }
  }

  private remember(room: string, ids: readonly string[]): void {
    const kept = this.posted.get(room) ?? [];
    kept.push(...ids);
    if (kept.length > ECHOES_KEPT) kept.splice(0, kept.length - ECHOES_KEPT);
    this.posted.set(room, kept);
  }

  private failedTry(
    room: string,
    post: PendingPost,
    tries: number,
    error: unknown,
    wait: number,
    logger: Logger,
  ): void {
    const entry = this.posts.get(`${room}#${post.id}`);
    if (!entry) return;
    const now = this.deps.clock();
    if (!entry.waiting) metrics.postsWaiting.inc();
    entry.waiting = { post, tries, since: entry.waiting?.since ?? now, reason: describeError(error), next: now + wait };
    const log = { err: error, room, agent: post.agent, post: post.id, tries, nextTryMs: wait };
    if (tries === 1) logger.warn(log, 'posting failed for a reason that passes: it is tried again');
    else logger.warn(log, 'posting failed again');
  }

  private forget(id: string): void {
    if (this.posts.get(id)?.waiting) metrics.postsWaiting.dec();
    this.posts.delete(id);
  }
}
