/**
 * A model call's usage is bookkeeping: the SQLite store writes it after the turn has gone on, the calls of that
 * moment summed in one transaction, and a read (or closing the store) writes what waits first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type SqliteStore } from '../../src/store/index.js';

let dir: string;
let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const changes = (s: SqliteStore) => Number((s.db.prepare('SELECT total_changes() AS n').get() as { n: number }).n);
const rows = (s: SqliteStore) =>
  s.db.prepare('SELECT agent, room, calls, input, cached, output FROM token_usage').all();

describe('usage in the SQLite store', () => {
  it('is written after the turn goes on, the calls of one moment in one transaction', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-usage-'));
    store = openStore(path.join(dir, 'r.db'));
    const s = store;
    const changesBefore = changes(s);
    const first = s.usage.add('data', 'test:a', { input: 100, cached: 40, output: 7 });
    const second = s.usage.add('data', 'test:a', { input: 50, cached: 80, output: 3 });
    const third = s.usage.add('code', 'test:b', { input: 10, cached: 0, output: 1 });
    // Nothing is written while the turn goes on.
    expect(rows(s)).toEqual([]);
    await Promise.all([first, second, third]);
    expect(rows(s)).toEqual([
      { agent: 'data', room: 'test:a', calls: 2, input: 150, cached: 90, output: 10 },
      { agent: 'code', room: 'test:b', calls: 1, input: 10, cached: 0, output: 1 },
    ]);
    // Two rows: one statement each, in one transaction.
    expect(changes(s) - changesBefore).toBe(2);
  });

  it('is read with every call added before the read, and written when the store closes', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-usage-'));
    const file = path.join(dir, 'r.db');
    store = openStore(file);
    void store.usage.add('data', 'test:a', { input: 100, cached: 0, output: 7 });
    expect(await store.usage.inRoom('test:a')).toEqual([{ agent: 'data', calls: 1, input: 100, cached: 0, output: 7 }]);
    void store.usage.add('data', 'test:a', { input: 1, cached: 0, output: 1 });
    await store.close();
    store = openStore(file);
    expect(await store.usage.total()).toEqual([{ agent: 'data', calls: 2, input: 101, cached: 0, output: 8 }]);
  });

  it('tells its callers when it could not be written', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-usage-'));
    store = openStore(path.join(dir, 'r.db'));
    store.db.exec('DROP TABLE token_usage');
    await expect(store.usage.add('data', 'test:a', { input: 1, cached: 0, output: 1 })).rejects.toThrow(/token_usage/);
  });
});
