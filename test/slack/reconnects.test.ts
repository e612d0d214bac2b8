import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RoomMarks } from '../../adapters/shared/room-marks.js';
import { compareTs } from '../../adapters/slack/catch-up.js';
import { Reconnects } from '../../adapters/slack/reconnects.js';
import type { AdapterSink } from '../../src/ports.js';

/** Marks of two rooms, both caught up, and what each reconnect asked for. */
function setup() {
  const written: string[] = [];
  const sink = {
    lastMessageId: () => undefined,
    caughtUp: (_platform: string, room: string, id: string) => void written.push(`${room}@${id}`),
  } as unknown as AdapterSink;
  const marks = new RoomMarks({ platform: 'slack', compare: compareTs, sink: () => sink, clock: Date.now });
  marks.caughtUp('C1', '100.000001');
  marks.caughtUp('C2', '100.000002');
  let catchUps = 0;
  const reconnects = new Reconnects({
    marks,
    catchUp: () => {
      catchUps += 1;
    },
    clock: Date.now,
    log: pino({ level: 'silent' }),
  });
  return { marks, reconnects, catchUps: () => catchUps, written };
}

describe('Slack reconnects', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reads nothing after a short gap, and the rooms' marks move again once Slack's resends are in", async () => {
    const { marks, reconnects, catchUps } = setup();
    reconnects.down('code');
    expect(marks.synced('C1')).toBe(false);
    await vi.advanceTimersByTimeAsync(8000);
    reconnects.up('code');
    expect(catchUps()).toBe(0);
    // Slack's retry a minute later may still bring what the gap missed: the marks stay put until then.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(marks.synced('C1')).toBe(false);
    await vi.advanceTimersByTimeAsync(30_000);
    expect([marks.synced('C1'), marks.synced('C2')]).toEqual([true, true]);
    expect(marks.start('C1')).toBe('100.000001');
  });

  it('catches up after a gap of a minute or more, the rooms out of sync until each is read', async () => {
    const { marks, reconnects, catchUps } = setup();
    reconnects.down('code');
    await vi.advanceTimersByTimeAsync(61_000);
    reconnects.up('code');
    expect(catchUps()).toBe(1);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(marks.synced('C1')).toBe(false);
  });

  it('waits for every app to be back, and a long gap of one of them means reading', async () => {
    const { reconnects, catchUps, marks } = setup();
    reconnects.down('code');
    reconnects.down('data');
    await vi.advanceTimersByTimeAsync(5000);
    reconnects.up('code');
    await vi.advanceTimersByTimeAsync(70_000);
    expect(catchUps()).toBe(0);
    reconnects.up('data');
    expect(catchUps()).toBe(1);
    // A short gap later resends nothing the long one missed: the rooms stay out of sync until read.
    reconnects.down('code');
    await vi.advanceTimersByTimeAsync(5000);
    reconnects.up('code');
    await vi.advanceTimersByTimeAsync(120_000);
    expect(marks.synced('C1')).toBe(false);
  });

  it('cancels the return to sync when a connection drops again meanwhile', async () => {
    const { reconnects, marks } = setup();
    reconnects.down('code');
    reconnects.up('code');
    await vi.advanceTimersByTimeAsync(45_000);
    reconnects.down('code');
    // The first return to sync was due now: it no longer happens.
    await vi.advanceTimersByTimeAsync(50_000);
    expect(marks.synced('C1')).toBe(false);
    reconnects.up('code');
    await vi.advanceTimersByTimeAsync(89_000);
    expect(marks.synced('C1')).toBe(false);
    await vi.advanceTimersByTimeAsync(1000);
    expect(marks.synced('C1')).toBe(true);
  });
});
