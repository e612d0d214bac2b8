import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { CatchUpHold } from '../../adapters/shared/catch-up-hold.js';
import { until } from '../helpers/until.js';

/** A catch-up the test finishes by hand. */
function gate(): { promise: Promise<void>; open: () => void; fail: (error: Error) => void } {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

const silent = () => pino({ level: 'silent' });

describe('holding live messages while a room catches up', () => {
  it('delivers a live message at once when its room is not catching up', async () => {
    const hold = new CatchUpHold({ log: silent() });
    const delivered: string[] = [];
    expect(hold.hold('room-1', async () => void delivered.push('live'))).toBe(false);
    expect(hold.holding('room-1')).toBe(false);
    expect(delivered).toEqual([]);
  });

  it("holds a room's live messages until its catch-up is done, then delivers them after what was missed, in order", async () => {
    const hold = new CatchUpHold({ log: silent() });
    const delivered: string[] = [];
    const fetched = gate();
    const catchingUp = hold.room('room-1', async () => {
      await fetched.promise;
      delivered.push('missed 1', 'missed 2');
    });
    expect(hold.holding('room-1')).toBe(true);
    expect(hold.hold('room-1', async () => void delivered.push('live 1'))).toBe(true);
    expect(hold.hold('room-1', async () => void delivered.push('live 2'))).toBe(true);
    // Another room is not held.
    expect(hold.hold('room-2', async () => {})).toBe(false);
    expect(delivered).toEqual([]);
    fetched.open();
    await catchingUp;
    expect(delivered).toEqual(['missed 1', 'missed 2', 'live 1', 'live 2']);
    expect(hold.holding('room-1')).toBe(false);
  });

  it('lets no message overtake a held one: what arrives while the held ones are delivered joins the end', async () => {
    const hold = new CatchUpHold({ log: silent() });
    const delivered: string[] = [];
    const slow = gate();
    let delivering = false;
    const fetched = gate();
    const catchingUp = hold.room('room-1', () => fetched.promise);
    hold.hold('room-1', async () => {
      delivering = true;
      await slow.promise;
      delivered.push('held');
    });
    fetched.open();
    await until(() => delivering);
    expect(hold.hold('room-1', async () => void delivered.push('arrived while delivering'))).toBe(true);
    slow.open();
    await catchingUp;
    expect(delivered).toEqual(['held', 'arrived while delivering']);
  });

  it('holds every room during a catch-up of every room', async () => {
    const hold = new CatchUpHold({ log: silent() });
    const delivered: string[] = [];
    const fetched = gate();
    const catchingUp = hold.everyRoom(() => fetched.promise);
    expect(hold.hold('room-1', async () => void delivered.push('a'))).toBe(true);
    expect(hold.hold('room-2', async () => void delivered.push('b'))).toBe(true);
    fetched.open();
    await catchingUp;
    expect(delivered).toEqual(['a', 'b']);
    expect(hold.holding('room-1')).toBe(false);
  });

  it('starts no second catch-up of a room while one runs: the one under way is awaited', async () => {
    const hold = new CatchUpHold({ log: silent() });
    const fetched = gate();
    let runs = 0;
    const first = hold.room('room-1', async () => {
      runs += 1;
      await fetched.promise;
    });
    const second = hold.room('room-1', async () => {
      runs += 1;
    });
    fetched.open();
    await Promise.all([first, second]);
    expect(runs).toBe(1);
  });

  it('still delivers the held messages when the catch-up fails, then reports the failure', async () => {
    const hold = new CatchUpHold({ log: silent() });
    const delivered: string[] = [];
    const fetched = gate();
    const catchingUp = hold.room('room-1', () => fetched.promise);
    hold.hold('room-1', async () => void delivered.push('live'));
    fetched.fail(new Error('503 from the platform'));
    await expect(catchingUp).rejects.toThrow('503 from the platform');
    expect(delivered).toEqual(['live']);
    expect(hold.holding('room-1')).toBe(false);
  });

  it('delivers the rest when one held message fails, and logs the failure', async () => {
    const lines: string[] = [];
    const hold = new CatchUpHold({ log: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }) });
    const delivered: string[] = [];
    const fetched = gate();
    const catchingUp = hold.room('room-1', () => fetched.promise);
    hold.hold('room-1', async () => {
      throw new Error('bridge refused it');
    });
    hold.hold('room-1', async () => void delivered.push('next'));
    fetched.open();
    await catchingUp;
    expect(delivered).toEqual(['next']);
    expect(lines.join('')).toContain('bridge refused it');
  });
});
