import { describe, expect, it } from 'vitest';
import { EditStream, type EditTransport, type StreamClock } from '../../adapters/shared/streaming-post.js';
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

/** Records each call; create and edit resolve when the test says so (or at once with `auto`). */
class RecordingTransport implements EditTransport {
  readonly calls: string[] = [];
  auto = false;
  createFails: 'no' | 'later' | 'error' = 'no';
  failRemove = false;
  failFinalEdit = false;
  private waiting: (() => void)[] = [];
  private next = 1;

  private request(call: string): Promise<void> {
    this.calls.push(call);
    if (this.auto) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  async create(text: string): Promise<string | undefined> {
    await this.request(`create ${text}`);
    if (this.createFails === 'later') {
      this.createFails = 'no';
      return undefined;
    }
    if (this.createFails === 'error') throw new Error('connection reset');
    return `m${this.next++}`;
  }
  async edit(id: string, text: string, final: boolean): Promise<void> {
    await this.request(`${final ? 'final ' : ''}edit ${id} ${text}`);
    if (final && this.failFinalEdit) throw new Error('500');
  }
  async remove(id: string): Promise<void> {
    this.calls.push(`remove ${id}`);
    if (this.failRemove) throw new Error('403 Missing Permissions');
  }
  async append(chunks: readonly string[]): Promise<string[]> {
    return chunks.map((chunk) => {
      this.calls.push(`append ${chunk}`);
      return `m${this.next++}`;
    });
  }
  async postWhole(text: string): Promise<{ messageIds: string[] }> {
    this.calls.push(`post ${text}`);
    return { messageIds: [`m${this.next++}`] };
  }
  /** Lets the oldest waiting call finish, and the work it triggers run. */
  async land(): Promise<void> {
    this.waiting.shift()?.();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
}

/**
 * A stream whose preview is the upper-cased text, whose final text splits into messages at "|", and where "@x"
 * stands for a mention (rendered `<@1>`, which notifies).
 */
function setup() {
  const clock = new ManualClock();
  const transport = new RecordingTransport();
  const post = new EditStream({
    transport,
    preview: (text) => text.toUpperCase(),
    final: (text) =>
      text
        .split('|')
        .filter((part) => part.trim() !== '')
        .map((part) => part.replaceAll('@x', '<@1>')),
    notifies: (message) => message.includes('<@1>'),
    intervalMs: 1000,
    clock,
    logger: silentLogger(),
  });
  return { clock, transport, post };
}

describe('a reply streamed by edits', () => {
  it('posts at once, then edits at most once per interval with only the newest text', async () => {
    const { clock, transport, post } = setup();
    post.update('hello');
    post.update('hello there');
    post.update('hello there, friend');
    expect(transport.calls).toEqual(['create HELLO']);
    await transport.land();
    // The post started at 0: the next change waits for the interval to end, then sends the newest text.
    expect(transport.calls).toEqual(['create HELLO']);
    expect(clock.pending).toBe(1);
    post.update('hello there, friend, how');
    clock.advance(999);
    expect(transport.calls).toHaveLength(1);
    clock.advance(1);
    expect(transport.calls).toEqual(['create HELLO', 'edit m1 HELLO THERE, FRIEND, HOW']);
    await transport.land();
    clock.advance(1000);
    expect(transport.calls).toHaveLength(2); // nothing new to show: no edit
  });

  it('makes no call when the preview would show what is already shown', async () => {
    const { clock, transport, post } = setup();
    transport.auto = true;
    post.update('same');
    await transport.land();
    post.update('SAME');
    clock.advance(1000);
    expect(transport.calls).toEqual(['create SAME']);
  });

  it('finishes by waiting for the call under way, then editing in the final text', async () => {
    const { transport, post } = setup();
    post.update('part of the');
    const finished = post.finish('Part of the answer, complete.');
    transport.auto = true;
    await transport.land();
    expect(await finished).toEqual({ messageIds: ['m1'] });
    expect(transport.calls).toEqual(['create PART OF THE', 'final edit m1 Part of the answer, complete.']);
  });

  it('makes no final edit when the message already shows the final text', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    post.update('done');
    await transport.land();
    expect(await post.finish('DONE')).toEqual({ messageIds: ['m1'] });
    expect(transport.calls).toEqual(['create DONE']);
  });

  it('posts the further messages of a long final text after the streamed first one', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    post.update('first part');
    await transport.land();
    expect(await post.finish('first part, whole|second part')).toEqual({ messageIds: ['m1', 'm2'] });
    expect(transport.calls).toEqual(['create FIRST PART', 'final edit m1 first part, whole', 'append second part']);
  });

  it('posts the reply whole when nothing was shown yet', async () => {
    const { transport, post } = setup();
    expect(await post.finish('Short and done.')).toEqual({ messageIds: ['m1'] });
    expect(transport.calls).toEqual(['post Short and done.']);
  });

  it('replaces the partial with a fresh post when the final text mentions someone', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    post.update('the summary is');
    await transport.land();
    const posted = await post.finish('@x the summary is ready');
    expect(transport.calls).toEqual(['create THE SUMMARY IS', 'remove m1', 'post @x the summary is ready']);
    expect(posted).toEqual({ messageIds: ['m2'] });
    expect([...post.dropped]).toEqual(['m1']);
  });

  it('keeps a mention in a later message: that message is a new post, so it notifies as it is', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    post.update('intro');
    await transport.land();
    await post.finish('intro|@x see above');
    expect(transport.calls).toEqual(['create INTRO', 'final edit m1 intro', 'append <@1> see above']);
  });

  it('posts the reply whole when the final edit fails, and the partial goes', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    transport.failFinalEdit = true;
    post.update('almost');
    await transport.land();
    expect(await post.finish('almost there')).toEqual({ messageIds: ['m2'] });
    expect(transport.calls).toEqual(['create ALMOST', 'final edit m1 almost there', 'remove m1', 'post almost there']);
  });

  it('stops showing after a failed first post and posts the final reply whole', async () => {
    const { clock, transport, post } = setup();
    transport.auto = true;
    transport.createFails = 'error';
    post.update('one');
    await transport.land();
    post.update('one two');
    clock.advance(2000);
    await post.finish('one two three');
    expect(transport.calls).toEqual(['create ONE', 'post one two three']);
  });

  it('tries the first post again when the platform said "later" and posted nothing', async () => {
    const { clock, transport, post } = setup();
    transport.auto = true;
    transport.createFails = 'later';
    post.update('one');
    await transport.land();
    post.update('one two');
    clock.advance(1000);
    await transport.land();
    expect(transport.calls).toEqual(['create ONE', 'create ONE TWO']);
    expect((await post.finish('ONE TWO')).messageIds).toEqual(['m1']);
  });

  it('removes the partial when the final text is empty', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    post.update('thinking');
    await transport.land();
    expect(await post.finish('')).toEqual({ messageIds: [] });
    expect(transport.calls).toEqual(['create THINKING', 'remove m1']);
  });

  it('cancels by deleting what was shown, never throws, and ignores later updates', async () => {
    const { clock, transport, post } = setup();
    transport.auto = true;
    transport.failRemove = true;
    post.update('something that will be');
    await transport.land();
    post.update('something that will be gone');
    await expect(post.cancel()).resolves.toBeUndefined();
    post.update('ignored after the end');
    clock.advance(5000);
    expect(transport.calls).toEqual(['create SOMETHING THAT WILL BE', 'remove m1']);
    expect([...post.dropped]).toEqual(['m1']);
  });

  it('cancels without a call when nothing was shown', async () => {
    const { transport, post } = setup();
    await post.cancel();
    expect(transport.calls).toEqual([]);
  });

  it('settles once finished or abandoned, so held echoes can go on', async () => {
    const { transport, post } = setup();
    transport.auto = true;
    let settled = false;
    void post.settled.then(() => {
      settled = true;
    });
    post.update('a reply being');
    await Promise.resolve();
    expect(settled).toBe(false);
    await post.finish('A reply being written.');
    await Promise.resolve();
    expect(settled).toBe(true);

    const other = setup();
    other.post.update('cut short');
    other.post.abandon();
    await expect(other.post.settled).resolves.toBeUndefined();
  });
});
