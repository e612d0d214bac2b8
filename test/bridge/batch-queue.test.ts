import { describe, expect, it } from 'vitest';
import { BatchQueue, type QueuedTurn } from '../../src/bridge/executors/batch-queue.js';

interface Turn extends QueuedTurn {
  readonly name: string;
  gone?: boolean;
}

const turn = (name: string, group = 'room', segmentTokens = 1000, contextTokens = 10_000): Turn => {
  const t: Turn = {
    name,
    group,
    contextTokens,
    sharedTokens: 2000,
    segmentTokens,
    wanted: () => !t.gone,
  };
  return t;
};

/** A queue on a heartbeat the test beats by hand, recording what it sends, sends alone and drops. */
function queue(reserve = 5000) {
  const sent: string[][] = [];
  const alone: string[] = [];
  const dropped: string[] = [];
  let beat = () => {};
  let stopped = false;
  const q = new BatchQueue<Turn>({
    tickMs: 1000,
    reserve,
    send: async (batch) => {
      sent.push(batch.map((t) => t.name));
    },
    alone: (t) => alone.push(t.name),
    drop: (t) => dropped.push(t.name),
    every: (_ms, tick) => {
      beat = tick;
      return () => {
        stopped = true;
      };
    },
  });
  // A beat, then the calls it sent come back (a group's next call waits for the one it has out).
  const tick = async () => {
    await beat();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { q, sent, alone, dropped, beat: tick, stopped: () => stopped };
}

describe('the batch heartbeat (seed 004)', () => {
  it("holds a group's other turns while its call is out: the call's answer may end their round", async () => {
    let release: () => void = () => {};
    const sent: string[][] = [];
    let beat = () => {};
    const q = new BatchQueue<Turn>({
      tickMs: 1000,
      reserve: 5000,
      send: (batch) => {
        sent.push(batch.map((t) => t.name));
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
      alone: () => {},
      drop: () => {},
      every: (_ms, tick) => {
        beat = tick;
        return () => {};
      },
    });
    q.submit(['a', 'b', 'c', 'd', 'e', 'f'].map((name) => turn(name)));
    beat();
    beat();
    expect(sent).toEqual([['a', 'b', 'c']]);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    beat();
    expect(sent).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e', 'f'],
    ]);
  });

  it('makes no call on a tick with nothing queued', async () => {
    const { q, sent, alone, beat } = queue();
    await beat();
    await beat();
    expect(sent).toEqual([]);
    expect(alone).toEqual([]);
    expect(q.waiting).toBe(0);
  });

  it('sends a lone agent at once, without waiting for the tick', async () => {
    const { q, sent, alone } = queue();
    q.submit([turn('ana')]);
    expect(alone).toEqual(['ana']);
    expect(sent).toEqual([]);
    expect(q.waiting).toBe(0);
  });

  it('holds agents that can share a call for the tick, then sends each group as one batch, in parallel', async () => {
    const { q, sent, alone, beat } = queue();
    q.submit([turn('ana'), turn('ben')]);
    q.submit([turn('cy', 'other room'), turn('dee', 'other room')]);
    expect(sent).toEqual([]);
    await beat();
    expect(sent).toEqual([
      ['ana', 'ben'],
      ['cy', 'dee'],
    ]);
    expect(alone).toEqual([]);
    expect(q.waiting).toBe(0);
  });

  it('lets a lone agent join a batch of its group that is already waiting', async () => {
    const { q, sent, alone, beat } = queue();
    q.submit([turn('ana'), turn('ben')]);
    q.submit([turn('cy')]);
    q.submit([turn('eve', 'elsewhere')]);
    expect(alone).toEqual(['eve']);
    await beat();
    expect(sent).toEqual([['ana', 'ben', 'cy']]);
  });

  it('packs first-in first-out within the smallest budget less the reserve; the rest waits for the next tick', async () => {
    const { q, sent, alone, beat } = queue();
    // 2000 shared + 1000 each, within 10000 - 5000: four fit, the fifth and sixth wait.
    q.submit(['a', 'b', 'c', 'd', 'e', 'f'].map((name) => turn(name)));
    await beat();
    expect(sent).toEqual([['a', 'b', 'c']]);
    expect(q.waiting).toBe(3);
    await beat();
    expect(sent).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e', 'f'],
    ]);
    expect(alone).toEqual([]);
  });

  it('sends on its own an agent that fits no batch, and one left alone by the packing', async () => {
    const { q, sent, alone, beat } = queue();
    q.submit([turn('big', 'room', 4000), turn('b'), turn('c')]);
    await beat();
    expect(alone).toEqual(['big']); // 2000 + 4000 > 5000: not even alone in a batch
    await beat();
    expect(sent).toEqual([['b', 'c']]);
    q.submit([turn('x', 'r2', 2000), turn('y', 'r2', 2000)]);
    await beat();
    expect(alone).toEqual(['big', 'x']); // x fits, x and y do not: x goes alone, y waits
    await beat();
    expect(alone).toEqual(['big', 'x', 'y']);
  });

  it('drops withdrawn turns at the tick, and everything queued when stopped', async () => {
    const { q, sent, dropped, beat, stopped } = queue();
    const turns = [turn('ana'), turn('ben'), turn('cy')];
    q.submit(turns);
    if (turns[1]) turns[1].gone = true;
    await beat();
    expect(dropped).toEqual(['ben']);
    expect(sent).toEqual([['ana', 'cy']]);
    q.submit([turn('dee'), turn('eve')]);
    q.stop();
    expect(dropped).toEqual(['ben', 'dee', 'eve']);
    expect(stopped()).toBe(true);
  });
});
