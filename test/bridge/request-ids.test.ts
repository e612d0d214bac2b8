import { describe, expect, it } from 'vitest';
import { RequestIds } from '../../src/bridge/loop/request-ids.js';
import { silentLogger } from '../../src/log.js';

/** Blocks of `size` ids, handed out in turn as a shared sequence would (other bridges take every other one). */
function sequence(size: number) {
  let next = 1;
  const given: number[] = [];
  return {
    given,
    reserve: async () => {
      const first = next;
      next += 2 * size; // another bridge takes the block in between
      given.push(first);
      return { first, count: size };
    },
  };
}

describe('request ids', () => {
  it('numbers on from the highest stored when the bridge is alone with its store', async () => {
    const ids = new RequestIds({ log: silentLogger() });
    await ids.start(async () => 41);
    expect(ids.next()).toBe(42);
    ids.took(2);
    expect(ids.next()).toBe(44);
  });

  it('takes ids from blocks of the shared store, and the next block before the current one runs out', async () => {
    const blocks = sequence(200);
    const ids = new RequestIds({ blocks, log: silentLogger() });
    await ids.start(async () => 0);
    const used: number[] = [];
    for (let i = 0; i < 1000; i++) {
      used.push(ids.next());
      ids.took(1);
      await new Promise((resolve) => setImmediate(resolve)); // the event loop turns between decisions
    }
    // Every id from a block this bridge reserved, none twice, and never one of the blocks in between.
    expect(new Set(used).size).toBe(used.length);
    const mine = (id: number) => blocks.given.some((first) => id >= first && id < first + 200);
    expect(used.every(mine)).toBe(true);
    expect(blocks.given.length).toBeGreaterThanOrEqual(5);
  });
});
