import { describe, expect, it } from 'vitest';
import { DiscordStreamingPost, type StreamClock, type StreamTransport } from '../../adapters/discord/streaming-post.js';
import { silentLogger } from '../../src/log.js';

/** A clock moved by hand: timers run when the test advances past them. */
class ManualClock implements StreamClock {
  time = 0;
  private timers: { at: number; run: () => void }[] = [];
  now(): number {
    return this.time;
  }
  after(ms: number, run: () => void): () => void {
    const timer = { at: this.time + ms, run };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }
  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((t) => t.at <= this.time);
    this.timers = this.timers.filter((t) => t.at > this.time);
    for (const timer of due) timer.run();
  }
  get pending(): number {
    return this.timers.length;
  }
}

/** Records each request; a request resolves when the test says so (or at once with `auto`). */
class RecordingTransport implements StreamTransport {
  readonly calls: string[] = [];
  auto = false;
  failRemove = false;
  private waiting: (() => void)[] = [];
  private next = 1;

  private request(call: string): Promise<void> {
    this.calls.push(call);
    if (this.auto) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  async create(content: string): Promise<string> {
    await this.request(`create ${content}`);
    return `m${this.next++}`;
  }
  async edit(id: string, content: string): Promise<void> {
    await this.request(`edit ${id} ${content}`);
  }
  async remove(id: string): Promise<void> {
    this.calls.push(`remove ${id}`);
    if (this.failRemove) throw new Error('403 Missing Permissions');
  }
  async append(chunks: readonly string[]): Promise<string[]> {
    this.calls.push(`append ${chunks.length}`);
    return chunks.map(() => `m${this.next++}`);
  }
  async postWhole(text: string): Promise<{ messageIds: string[] }> {
    this.calls.push(`post ${text}`);
    return { messageIds: [`m${this.next++}`] };
  }
  /** Lets the oldest waiting request finish, and the work it triggers run. */
  async land(): Promise<void> {
    this.waiting.shift()?.();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
}

function setup(render: (text: string) => string = (text) => text) {
  const clock = new ManualClock();
  const transport = new RecordingTransport();
  const post = new DiscordStreamingPost({ transport, render, intervalMs: 1000, clock, logger: silentLogger() });
  return { clock, transport, post };
}

describe('a streamed Discord reply', () => {
  it('creates the message at once, then edits at most once per interval with only the latest text', async () => {
    const { clock, transport, post } = setup();
    post.update('Hello');
    post.update('Hello there');
    post.update('Hello there, friend');
    expect(transport.calls).toEqual(['create Hello']);
    await transport.land();
    // The create started at 0: the next change waits for the interval to end, then sends the latest text.
    expect(transport.calls).toEqual(['create Hello']);
    expect(clock.pending).toBe(1);
    post.update('Hello there, friend, how');
    clock.advance(1000);
    expect(transport.calls).toEqual(['create Hello', 'edit m1 Hello there, friend, how']);
    await transport.land();
    clock.advance(1000);
    expect(transport.calls).toHaveLength(2); // nothing new to show: no edit
  });

  it('finishes by waiting for the request under way, then editing in the final text', async () => {
    const { transport, post } = setup();
    transport.auto = false;
    post.update('Part of the');
    const finished = post.finish('Part of the answer, complete.');
    transport.auto = true;
    await transport.land();
    expect(await finished).toEqual({ messageIds: ['m1'] });
    expect(transport.calls).toEqual(['create Part of the', 'edit m1 Part of the answer, complete.']);
  });

  it('posts the extra chunks of a long final text after the streamed first chunk', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    post.update('x'.repeat(2500));
    const long = `${'a'.repeat(1500)}\n${'b'.repeat(1500)}`;
    expect(await post.finish(long)).toEqual({ messageIds: ['m1', 'm2'] });
    expect(transport.calls[0]).toBe(`create ${'x'.repeat(2000)}`);
    expect(transport.calls.slice(1)).toEqual([`edit m1 ${'a'.repeat(1500)}`, 'append 1']);
  });

  it('posts the reply whole when nothing was shown yet', async () => {
    const { transport, post } = setup();
    expect(await post.finish('Short and done.')).toEqual({ messageIds: ['m1'] });
    expect(transport.calls).toEqual(['post Short and done.']);
  });

  it('replaces the partial with a fresh post when the final text mentions someone', async () => {
    const { transport, post } = setup((text) => text.replace('@carol', '<@42>'));
    transport.auto = true;
    post.update('The summary is');
    const posted = await post.finish('The summary is ready, @carol.');
    expect(transport.calls).toEqual(['create The summary is', 'remove m1', 'post The summary is ready, @carol.']);
    expect(posted).toEqual({ messageIds: ['m2'] });
    expect([...post.dropped]).toEqual(['m1']);
  });

  it('cancels by deleting what was shown, and never throws', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    transport.failRemove = true;
    post.update('Something that will be');
    await expect(post.cancel()).resolves.toBeUndefined();
    expect(transport.calls).toEqual(['create Something that will be', 'remove m1']);
    expect([...post.dropped]).toEqual(['m1']);
    post.update('ignored after the end');
    expect(transport.calls).toHaveLength(2);
  });

  it('settles once finished, so held echoes can go on', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    let settled = false;
    void post.settled.then(() => {
      settled = true;
    });
    post.update('A reply being');
    await Promise.resolve();
    expect(settled).toBe(false);
    await post.finish('A reply being written.');
    await Promise.resolve();
    expect(settled).toBe(true);
  });
});
