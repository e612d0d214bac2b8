/**
 * Only news becomes a decision: the echo of the bridge's own post is dropped before the room sees it (the poster knows
 * the ids the platform just gave it), and a live message's catch-up mark is stored without deciding anything.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CommitResult } from '../../src/store/port.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';

let h: Harness;
afterEach(async () => h?.close());

/** Counts the room's commits from now on, with what each came to. */
function watchCommits(harness: Harness): CommitResult[] {
  const results: CommitResult[] = [];
  const commit = harness.store.rooms.commit.bind(harness.store.rooms);
  vi.spyOn(harness.store.rooms, 'commit').mockImplementation(async (...args) => {
    const result = await commit(...args);
    results.push(result);
    return result;
  });
  return results;
}

describe('only news', () => {
  it("drops the echo of the bridge's own post before the room decides on it", async () => {
    h = await startHarness({ agents: [{ name: 'ada', activation: 'mention' }] });
    h.llm.respond(() => ({ content: 'a long answer '.repeat(300) })); // posted in several platform messages
    h.adapter.chunkSize = 1000;
    await h.bridge.start();
    const commits = watchCommits(h);
    // Every echo's receipt, once the bridge has taken it.
    const sink = h.adapter.sink;
    if (!sink) throw new Error('the adapter has no sink');
    const receive = sink.receive.bind(sink);
    const echoes: unknown[] = [];
    sink.receive = async (event) => {
      const receipt = await receive(event);
      if (event.author.kind === 'agent') echoes.push(receipt);
      return receipt;
    };
    await h.adapter.say('@ada tell me');
    await until(() => echoes.length === 5);
    await h.bridge.idle();
    const posted = h.adapter.posts.filter((post) => post.agent === 'ada');
    expect(posted).toHaveLength(1);
    // Every echo (one per platform message) reached the bridge, and none of them came to a decision.
    expect(echoes).toEqual(['kept', 'kept', 'kept', 'kept', 'kept']);
    expect(commits).not.toContain('duplicate');
    // The human message, the turn's answer, the post's outcome: three decisions, none for the echoes.
    expect(commits).toEqual(['done', 'done', 'done']);
    const stored = await history(h.store, 'test', 'room', 10);
    expect(stored.map((m) => m.author)).toEqual(['user', 'ada']);
  });

  it("stores a live message's catch-up mark once the room has taken it, deciding nothing", async () => {
    h = await startHarness({ agents: [{ name: 'ada', activation: 'mention' }] });
    await h.bridge.start();
    await h.adapter.say('just chatting', { id: 'm1' });
    await h.bridge.idle();
    const commits = watchCommits(h);
    h.bridge.sink.forwarded?.('test', 'room', 'm1');
    await until(async () => (await h.store.rooms.caughtUp('test', 'room')) === 'm1');
    expect(commits).toEqual([]);
  });
});
