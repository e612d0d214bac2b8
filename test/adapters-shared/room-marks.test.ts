/** A room's catch-up ends with `caughtUp` (the room decides on it); a live mark after that is only `forwarded`. */
import { describe, expect, it } from 'vitest';
import { RoomMarks } from '../../adapters/shared/room-marks.js';
import type { AdapterSink } from '../../src/ports.js';

describe('RoomMarks', () => {
  it('tells a catch-up done through caughtUp and a live message through forwarded', () => {
    const told: string[] = [];
    const sink = {
      lastMessageId: () => undefined,
      caughtUp: (_platform: string, room: string, id: string) => void told.push(`caughtUp ${room}@${id}`),
      forwarded: (_platform: string, room: string, id: string) => void told.push(`forwarded ${room}@${id}`),
    } as unknown as AdapterSink;
    let now = 0;
    const marks = new RoomMarks({
      platform: 'test',
      compare: (a, b) => a.localeCompare(b),
      sink: () => sink,
      clock: () => now,
    });
    marks.caughtUp('c1', 'm1');
    now += 60_000;
    marks.forwarded('c1', 'm2');
    now += 60_000;
    marks.forwarded('c1', 'm3');
    marks.flush();
    expect(told).toEqual(['caughtUp c1@m1', 'forwarded c1@m2', 'forwarded c1@m3', 'forwarded c1@m3']);
  });

  it('falls back on caughtUp for a sink without forwarded', () => {
    const told: string[] = [];
    const sink = {
      lastMessageId: () => undefined,
      caughtUp: (_platform: string, room: string, id: string) => void told.push(`${room}@${id}`),
    } as unknown as AdapterSink;
    const marks = new RoomMarks({
      platform: 'test',
      compare: (a, b) => a.localeCompare(b),
      sink: () => sink,
      clock: () => 0,
    });
    marks.caughtUp('c1', 'm1');
    marks.forwarded('c1', 'm2');
    marks.flush();
    expect(told).toEqual(['c1@m1', 'c1@m2']);
  });
});
