import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CatchUpRetries } from '../../adapters/shared/catch-up-retries.js';

const silent = () => pino({ level: 'silent' });

describe('trying a failed catch-up again', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tries again after 1 s, then 2 s, 4 s … at most 5 minutes apart, until it succeeds', async () => {
    const retries = new CatchUpRetries({ log: silent(), what: 'test catch-up' });
    const tries: number[] = [];
    const start = Date.now();
    let left = 12;
    const attempt = async () => {
      tries.push(Date.now() - start);
      left -= 1;
      return left === 0;
    };
    retries.failed('room', attempt);
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    const gaps = tries.map((at, i) => at - (tries[i - 1] ?? 0));
    expect(gaps).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map((s) => s * 1000));
    expect(retries.retrying('room')).toBe(false);
  });

  it('keeps one schedule per room: a second failure meanwhile does not try twice', async () => {
    const retries = new CatchUpRetries({ log: silent(), what: 'test catch-up' });
    const tries: string[] = [];
    retries.failed('room', async () => {
      tries.push('first');
      return true;
    });
    retries.failed('room', async () => {
      tries.push('second');
      return true;
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(tries).toEqual(['second']);
  });

  it('counts a rejected try as a failure, and starts from 1 s again after a success', async () => {
    const retries = new CatchUpRetries({ log: silent(), what: 'test catch-up' });
    const tries: number[] = [];
    let calls = 0;
    const attempt = async () => {
      calls += 1;
      tries.push(Date.now());
      if (calls === 1) throw new Error('500');
      return true;
    };
    const start = Date.now();
    retries.failed('room', attempt);
    await vi.advanceTimersByTimeAsync(5000);
    expect(tries.map((at) => at - start)).toEqual([1000, 3000]);
    retries.failed('room', attempt);
    await vi.advanceTimersByTimeAsync(1000);
    expect(tries.map((at) => at - start)).toEqual([1000, 3000, 6000]);
  });

  it('drops a retry when the room caught up another way, and every retry on stop', async () => {
    const retries = new CatchUpRetries({ log: silent(), what: 'test catch-up' });
    const tries: string[] = [];
    retries.failed('a', async () => {
      tries.push('a');
      return true;
    });
    retries.failed('b', async () => {
      tries.push('b');
      return true;
    });
    retries.succeeded('a');
    retries.stop();
    retries.failed('c', async () => {
      tries.push('c');
      return true;
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(tries).toEqual([]);
  });
});
