/**
 * What the log says when the store's Postgres connections drop: one line for the drop (the URL's password redacted),
 * one when the database answers again, however many connections dropped and however many looks failed between.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConnectionWatch, reconnectWait } from '../../src/store/postgres/connection-watch.js';
import { captureLogger } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

const URL = 'postgres://roundtable:hunter2-secret@db.internal:5432/roundtable';

/** A pool whose `SELECT 1` fails while `down` is set. */
function fakePool() {
  const state = { down: true, looks: 0 };
  const pool = {
    query: async () => {
      state.looks += 1;
      if (state.down) throw new Error('connect ECONNREFUSED 10.0.0.5:5432');
      return { rows: [] };
    },
  } as unknown as pg.Pool;
  return { pool, state };
}

const messages = (lines: Array<Record<string, unknown>>, level: number) =>
  lines.filter((line) => line.level === level).map((line) => String(line.msg));

describe('the store connection watch', () => {
  it('says a drop once and the return once, however many connections dropped and looks failed', async () => {
    const { logger, lines } = captureLogger();
    const { pool, state } = fakePool();
    const watch = new ConnectionWatch({ pool, url: URL, log: logger, wait: () => 5 });
    for (let i = 0; i < 10; i++) watch.dropped(new Error('Connection terminated unexpectedly'));
    await until(() => state.looks >= 4);
    expect(watch.waiting).toBe(true);
    state.down = false;
    await until(() => !watch.waiting);
    watch.stop();

    expect(messages(lines, 40)).toEqual([
      'the database connection to postgres://[redacted]@db.internal:5432/roundtable dropped (Connection terminated unexpectedly); connecting again',
    ]);
    expect(messages(lines, 30)).toEqual([
      expect.stringMatching(
        /^the database connections to postgres:\/\/\[redacted\]@db\.internal:5432\/roundtable are back \(after \d+\.\d s\)$/,
      ),
    ]);
    expect(lines.find((line) => line.level === 30)).toMatchObject({ droppedConnections: 10 });
    expect(JSON.stringify(lines)).not.toContain('hunter2-secret');
  });

  it('is back at the first connection the pool opens again, and says a later drop again', async () => {
    const { logger, lines } = captureLogger();
    const { pool, state } = fakePool();
    const watch = new ConnectionWatch({ pool, url: URL, log: logger, wait: () => 60_000 });
    watch.dropped(new Error('read ECONNRESET'));
    watch.connected();
    expect(watch.waiting).toBe(false);
    watch.dropped(new Error('terminating connection due to administrator command'));
    watch.stop();
    expect(state.looks).toBe(0);
    expect(messages(lines, 40)).toHaveLength(2);
    expect(messages(lines, 30)).toHaveLength(1);
  });

  it('waits half a second, then twice as long each time, up to 15 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 30].map(reconnectWait)).toEqual([500, 1000, 2000, 4000, 8000, 15_000, 15_000, 15_000]);
  });
});
