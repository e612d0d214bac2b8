import { describe, expect, it } from 'vitest';
import { RoomFeed } from '../../adapters/web/feed.js';
import type { FeedEvent, ServerFrame } from '../../adapters/web/protocol.js';

const message = (id: string, text = id): FeedEvent => ({
  kind: 'message',
  message: { id, author: 'ana', role: 'human', text, at: 1, tools: [] },
});
const stream = (id: string, text: string): FeedEvent => ({ kind: 'stream', id, agent: 'code', text, at: 1 });
const kinds = (frames: ServerFrame[]) =>
  frames.map((f) =>
    f.type === 'event'
      ? `${f.n}:${f.event.kind}:${'id' in f.event ? f.event.id : f.event.kind === 'message' ? f.event.message.id : ''}`
      : f.type,
  );

describe("a web room's feed", () => {
  it('numbers every event and tells each listener; a page resumes with exactly what came after its number', () => {
    const feed = new RoomFeed('run-1');
    const heard: ServerFrame[] = [];
    const stop = feed.listen((frame) => heard.push(frame));
    feed.publish(message('a'));
    feed.publish(message('b'));
    stop();
    feed.publish(message('c'));
    expect(kinds(heard)).toEqual(['1:message:a', '2:message:b']);
    expect(feed.canResume('run-1', 1)).toBe(true);
    expect(kinds(feed.since(1))).toEqual(['2:message:b', '3:message:c']);
    expect(feed.canResume('run-2', 1)).toBe(false);
    expect(feed.canResume('run-1', 4)).toBe(false);
  });

  it("keeps only a reply's newest text while it is written, and only its message once it is done", () => {
    const feed = new RoomFeed('run-1');
    feed.publish(message('a'));
    feed.publish(stream('s1', 'Hel'));
    feed.publish(stream('s1', 'Hello'));
    expect(kinds(feed.since(0))).toEqual(['1:message:a', '3:stream:s1']);
    expect(feed.streams()).toEqual([{ id: 's1', agent: 'code', text: 'Hello', at: 1 }]);
    feed.publish(message('s1', 'Hello there'));
    expect(kinds(feed.since(0))).toEqual(['1:message:a', '4:message:s1']);
    expect(feed.streams()).toEqual([]);
    feed.publish(stream('s2', 'Hm'));
    feed.publish({ kind: 'unstream', id: 's2' });
    expect(kinds(feed.since(4))).toEqual(['6:unstream:s2']);
    // A page that saw the first text of s1 still resumes: the rest of the room is all there.
    expect(feed.canResume('run-1', 2)).toBe(true);
  });

  it('loads a page afresh once what it missed is no longer kept', () => {
    const feed = new RoomFeed('run-1');
    for (let i = 0; i < 2005; i++) feed.publish(message(`m${i}`));
    expect(feed.canResume('run-1', 4)).toBe(false);
    expect(feed.canResume('run-1', 5)).toBe(true);
    expect(feed.since(5)).toHaveLength(2000);
    expect(feed.messages()).toHaveLength(2000);
  });
});
