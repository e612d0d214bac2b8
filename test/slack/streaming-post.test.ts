import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SlackStreamingPost, type StreamCalls } from '../../adapters/slack/streaming-post.js';
import { silentLogger } from '../../src/log.js';

/** Slack calls recorded in order; `start` answers ts "1", later posts "2", "3", … */
class Calls implements StreamCalls {
  readonly log: string[] = [];
  startFails: 'no' | 'rate-limit' | 'error' = 'no';
  removeFails = false;
  private next = 1;
  /** Holds the next call until released, to see what happens meanwhile. */
  hold: Promise<void> | undefined;

  async start(text: string): Promise<string | undefined> {
    this.log.push(`post ${text}`);
    await this.hold;
    if (this.startFails === 'rate-limit') {
      this.startFails = 'no';
      return undefined;
    }
    if (this.startFails === 'error') throw new Error('connection reset');
    return String(this.next++);
  }
  async update(ts: string, text: string, final: boolean): Promise<void> {
    this.log.push(`${final ? 'final ' : ''}update ${ts} ${text}`);
    await this.hold;
  }
  async remove(ts: string): Promise<void> {
    this.log.push(`delete ${ts}`);
    if (this.removeFails) throw new Error('cant_delete_message');
  }
  async postMore(chunks: readonly string[]): Promise<string[]> {
    return chunks.map((chunk) => {
      this.log.push(`post ${chunk}`);
      return String(this.next++);
    });
  }
  async postFresh(text: string): Promise<{ messageIds: string[] }> {
    this.log.push(`fresh ${text}`);
    return { messageIds: [String(this.next++)] };
  }
}

function streamingPost(calls: Calls): SlackStreamingPost {
  return new SlackStreamingPost({
    calls,
    preview: (text) => text.toUpperCase(),
    // "|" splits the final text into messages; "@x" stands for a live mention.
    final: (text) => text.split('|').map((part) => part.replaceAll('@x', '<@U1>')),
    intervalMs: 1000,
    log: silentLogger(),
    now: () => Date.now(),
  });
}

/** Lets pending promise callbacks run. */
const flush = () => vi.advanceTimersByTimeAsync(0);

describe('a streamed Slack reply', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('posts at once, then edits at most once an interval with the newest text', async () => {
    const calls = new Calls();
    const post = streamingPost(calls);
    post.update('a');
    await flush();
    post.update('ab');
    post.update('abc');
    await vi.advanceTimersByTimeAsync(999);
    expect(calls.log).toEqual(['post A']);
    await vi.advanceTimersByTimeAsync(1);
    post.update('abcd');
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls.log).toEqual(['post A', 'update 1 ABC', 'update 1 ABCD']);
  });

  it('finishes by editing the streamed message and posting the rest of a long reply', async () => {
    const calls = new Calls();
    const post = streamingPost(calls);
    post.update('part');
    await flush();
    post.update('part one');
    const posted = await post.finish('part one|part two');
    await vi.advanceTimersByTimeAsync(5000);
    // The pending preview edit is dropped: the final text replaces it.
    expect(calls.log).toEqual(['post PART', 'final update 1 part one', 'post part two']);
    expect(posted.messageIds).toEqual(['1', '2']);
  });

  it('waits for a call under way before finishing, so the final text is the last word', async () => {
    const calls = new Calls();
    let release: () => void = () => {};
    calls.hold = new Promise((resolve) => {
      release = resolve;
    });
    const post = streamingPost(calls);
    post.update('first');
    const finishing = post.finish('done');
    await flush();
    expect(calls.log).toEqual(['post FIRST']);
    release();
    expect((await finishing).messageIds).toEqual(['1']);
    expect(calls.log).toEqual(['post FIRST', 'final update 1 done']);
  });

  it('makes no final edit when the message already shows the final text', async () => {
    const calls = new Calls();
    const post = streamingPost(calls);
    post.update('done');
    await flush();
    expect((await post.finish('DONE')).messageIds).toEqual(['1']);
    expect(calls.log).toEqual(['post DONE']);
  });

  it('replaces the streamed message with a fresh post when the final text mentions someone', async () => {
    const calls = new Calls();
    const post = streamingPost(calls);
    post.update('hello');
    await flush();
    const posted = await post.finish('@x hello');
    expect(calls.log).toEqual(['post HELLO', 'delete 1', 'fresh @x hello']);
    expect(posted.messageIds).toEqual(['2']);
  });

  it('keeps a mention in a later part: only that part is posted, and it notifies', async () => {
    const calls = new Calls();
    const post = streamingPost(calls);
    post.update('intro');
    await flush();
    await post.finish('intro|@x see above');
    expect(calls.log).toEqual(['post INTRO', 'final update 1 intro', 'post <@U1> see above']);
  });

  it('posts the reply whole when nothing was shown', async () => {
    const calls = new Calls();
    const posted = await streamingPost(calls).finish('short');
    expect(calls.log).toEqual(['fresh short']);
    expect(posted.messageIds).toEqual(['1']);
  });

  it('stops previews after a failed first post and posts the final reply whole', async () => {
    const calls = new Calls();
    calls.startFails = 'error';
    const post = streamingPost(calls);
    post.update('one');
    await flush();
    post.update('one two');
    await vi.advanceTimersByTimeAsync(2000);
    await post.finish('one two three');
    expect(calls.log).toEqual(['post ONE', 'fresh one two three']);
  });

  it('tries the first post again after a 429 (nothing was posted)', async () => {
    const calls = new Calls();
    calls.startFails = 'rate-limit';
    const post = streamingPost(calls);
    post.update('one');
    await flush();
    post.update('one two');
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls.log).toEqual(['post ONE', 'post ONE TWO']);
    expect((await post.finish('one two three')).messageIds).toEqual(['1']);
  });

  it('deletes what was shown on cancel, never throws, and ignores later updates', async () => {
    const calls = new Calls();
    calls.removeFails = true;
    const post = streamingPost(calls);
    post.update('thinking');
    await flush();
    post.update('thinking more');
    await expect(post.cancel()).resolves.toBeUndefined();
    post.update('too late');
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls.log).toEqual(['post THINKING', 'delete 1']);
  });

  it('cancels without a call when nothing was shown', async () => {
    const calls = new Calls();
    await streamingPost(calls).cancel();
    expect(calls.log).toEqual([]);
  });
});
