import pino, { type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { type PostFile, type RecentPost, ReplyPoster, type ReplyTarget } from '../../adapters/shared/reply-posting.js';
import { splitMessage } from '../../adapters/shared/split.js';

/** A platform in memory: what was sent (with its key) and attached, and the failures a test asks for. */
class FakePlatform implements ReplyTarget {
  readonly room = 'room-1';
  limit = 20;
  fileLimitBytes: number | undefined = undefined;
  readonly sent: Array<{ text: string; key: string | undefined }> = [];
  /** For each post sent: whether it was the last part of its reply. */
  readonly lastParts: boolean[] = [];
  readonly attached: Array<{ note: string; file: PostFile; key: string | undefined }> = [];
  /** The identity's messages already in the room (a restart may have sent them). */
  recentPosts: RecentPost[] = [];
  /** The send with this number (1 = the first) fails. */
  failSend: number | undefined;
  failAttach = false;
  failRecent = false;
  /** Whether the platform says which message an attachment made. */
  attachmentIds = true;
  recentAskedSince: number | undefined;
  private next = 1;

  async send(text: string, key: string | undefined, _signal?: AbortSignal, last?: boolean): Promise<string> {
    if (this.sent.length + 1 === this.failSend) throw new Error('503 Service Unavailable');
    this.sent.push({ text, key });
    this.lastParts.push(last === true);
    return `m${this.next++}`;
  }

  async attach(note: string, file: PostFile, key: string | undefined): Promise<string | undefined> {
    if (this.failAttach) throw new Error('missing_scope: files:write');
    this.attached.push({ note, file, key });
    const id = `m${this.next++}`;
    return this.attachmentIds ? id : undefined;
  }

  async recent(since: number): Promise<RecentPost[]> {
    this.recentAskedSince = since;
    if (this.failRecent) throw new Error('429 Too Many Requests');
    return this.recentPosts;
  }
}

/** A logger whose lines the test reads. */
function recordingLog(): { log: Logger; lines: () => Array<Record<string, unknown>> } {
  const written: string[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => written.push(line) });
  return { log, lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

const words = (count: number) => Array.from({ length: count }, (_, i) => `word${i}`).join(' ');

describe('posting a reply (every platform)', () => {
  it('tells the platform which part is the last (where a card carries its buttons)', async () => {
    const platform = new FakePlatform();
    const poster = new ReplyPoster({ log: recordingLog().log, maxPosts: 10 });
    await poster.reply(platform, words(9), words(9));
    expect(platform.lastParts).toEqual([false, false, true]);
  });

  it("splits the reply at the platform's limit and posts the parts in order, returning every id", async () => {
    const platform = new FakePlatform();
    const poster = new ReplyPoster({ log: recordingLog().log, maxPosts: 10 });
    const result = await poster.reply(platform, words(6), words(6));
    expect(platform.sent.map((post) => post.text)).toEqual(splitMessage(words(6), platform.limit));
    expect(platform.sent.map((post) => post.text.trim())).toEqual(['word0 word1 word2', 'word3 word4 word5']);
    expect(result).toEqual({ ids: ['m1', 'm2'] });
  });

  it('keys each post by the outbox key and its place in the reply, and leaves posts without one unkeyed', async () => {
    const keyed = new FakePlatform();
    const poster = new ReplyPoster({ log: recordingLog().log, maxPosts: 10 });
    await poster.reply(keyed, words(6), words(6), { key: 'ob42' });
    expect(keyed.sent.map((post) => post.key)).toEqual(['ob42.0', 'ob42.1']);
    const unkeyed = new FakePlatform();
    await poster.reply(unkeyed, words(6), words(6));
    expect(unkeyed.sent.map((post) => post.key)).toEqual([undefined, undefined]);
  });

  it('caps a long reply at MAX_REPLY_POSTS posts, the last one with the whole reply attached as reply.md', async () => {
    const platform = new FakePlatform();
    const poster = new ReplyPoster({ log: recordingLog().log, maxPosts: 3 });
    const whole = words(30);
    const result = await poster.reply(platform, whole, whole, { key: 'ob7' });
    expect(platform.sent.map((post) => post.key)).toEqual(['ob7.0', 'ob7.1']);
    expect(platform.attached).toHaveLength(1);
    expect(platform.attached[0]?.file).toEqual({ name: 'reply.md', text: whole });
    expect(platform.attached[0]?.note).toMatch(/more characters: the whole reply is attached as reply\.md\)$/);
    expect(platform.attached[0]?.key).toBe('ob7.2');
    expect(result.ids).toEqual(['m1', 'm2', 'm3']);
  });

  it("counts the attachment's message only when the platform says which one it is", async () => {
    const platform = new FakePlatform();
    platform.attachmentIds = false;
    const poster = new ReplyPoster({ log: recordingLog().log, maxPosts: 2 });
    const result = await poster.reply(platform, words(30), words(30));
    expect(platform.attached).toHaveLength(1);
    expect(result.ids).toEqual(['m1']);
  });

  it("cuts a long reply with a note, without trying, when the file is over the platform's upload limit", async () => {
    const platform = new FakePlatform();
    platform.fileLimitBytes = 50;
    const poster = new ReplyPoster({ log: recordingLog().log, maxPosts: 2 });
    const result = await poster.reply(platform, words(30), words(30), { key: 'ob9' });
    expect(platform.attached).toEqual([]);
    expect(platform.sent.map((post) => post.text)).toEqual([
      'word0 word1 word2',
      expect.stringMatching(/^… \[\d+ more characters cut: the reply was longer than 2 messages\]$/),
    ]);
    // The note is a post of its own: its key cannot be taken for the attachment's.
    expect(platform.sent[1]?.key).toBe('ob9c.0');
    expect(result).toEqual({ ids: ['m1', 'm2'] });
  });

  it('cuts a long reply with a note when the file cannot be attached, and logs why', async () => {
    const platform = new FakePlatform();
    platform.failAttach = true;
    const { log, lines } = recordingLog();
    const poster = new ReplyPoster({ log, maxPosts: 2 });
    const result = await poster.reply(platform, words(30), words(30));
    expect(platform.sent[1]?.text).toMatch(/cut: the reply was longer than 2 messages\]$/);
    expect(result.ids).toEqual(['m1', 'm2']);
    expect(lines().find((line) => line.level === 40)?.msg).toMatch(
      /could not be attached; it is cut \(missing_scope: files:write\)/,
    );
  });

  it('posts only what a restart had not sent yet, found by its text among the recent posts', async () => {
    const platform = new FakePlatform();
    platform.recentPosts = [
      { id: 'other', text: 'someone else' },
      { id: 'old1', text: 'word0 word1 word2 ' },
    ];
    const poster = new ReplyPoster({ log: recordingLog().log, maxPosts: 10 });
    const result = await poster.reply(platform, words(6), words(6), { key: 'ob1', resendSince: 1_700_000_000_000 });
    expect(platform.recentAskedSince).toBe(1_700_000_000_000);
    expect(platform.sent).toEqual([{ text: splitMessage(words(6), platform.limit)[1], key: 'ob1.1' }]);
    expect(result.ids).toEqual(['old1', 'm1']);
  });

  it('finds the note a restart already posted, and neither attaches nor cuts again', async () => {
    const platform = new FakePlatform();
    const poster = new ReplyPoster({ log: recordingLog().log, maxPosts: 2 });
    const whole = words(30);
    await poster.reply(platform, whole, whole);
    const first = [...platform.sent.map((post) => post.text), ...platform.attached.map((post) => post.note)];
    const again = new FakePlatform();
    again.recentPosts = first.map((text, index) => ({ id: `old${index}`, text }));
    const result = await poster.reply(again, whole, whole, { resendSince: 1 });
    expect(again.sent).toEqual([]);
    expect(again.attached).toEqual([]);
    expect(result.ids).toEqual(['old0', 'old1']);
  });

  it('does not look for earlier posts on a first try', async () => {
    const platform = new FakePlatform();
    await new ReplyPoster({ log: recordingLog().log, maxPosts: 10 }).reply(platform, 'hello', 'hello');
    expect(platform.recentAskedSince).toBeUndefined();
  });

  it('posts the whole reply when the recent posts cannot be read, and logs why', async () => {
    const platform = new FakePlatform();
    platform.failRecent = true;
    const { log, lines } = recordingLog();
    const result = await new ReplyPoster({ log, maxPosts: 10 }).reply(platform, words(6), words(6), {
      resendSince: 1,
    });
    expect(result.ids).toEqual(['m1', 'm2']);
    expect(lines().map((line) => line.msg)).toContain('could not look for a post sent before the restart');
  });

  it('stops at the first post that fails: the ids posted before it and the error, and nothing attached', async () => {
    const platform = new FakePlatform();
    platform.failSend = 2;
    const { log, lines } = recordingLog();
    const result = await new ReplyPoster({ log, maxPosts: 3 }).reply(platform, words(30), words(30));
    expect(result.ids).toEqual(['m1']);
    expect(String(result.error)).toMatch(/503/);
    expect(platform.sent).toHaveLength(1);
    expect(platform.attached).toEqual([]);
    expect(lines().find((line) => line.msg === 'reply cut short')).toMatchObject({ channel: 'room-1', posted: 1 });
  });

  it('posts nothing once the signal is aborted', async () => {
    const platform = new FakePlatform();
    const controller = new AbortController();
    controller.abort();
    const result = await new ReplyPoster({ log: recordingLog().log, maxPosts: 10 }).reply(platform, 'hi', 'hi', {
      signal: controller.signal,
    });
    expect(platform.sent).toEqual([]);
    expect(result.ids).toEqual([]);
    expect(result.error).toBeInstanceOf(Error);
  });
});
