import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, readMigrations, type Store } from '../../src/store/index.js';

let dir: string;
let store: Store;
const file = () => path.join(dir, 'rt.db');
const message = (channelId: number, content: string, ids: string[] = [], kind: 'human' | 'agent' = 'human') => ({
  channelId,
  author: kind === 'human' ? 'user' : 'code',
  authorId: 'u1',
  kind,
  content,
  mentions: content.includes('@code') ? ['code'] : [],
  at: 1,
  platformIds: ids,
});

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-store-'));
  store = openStore(file());
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('store', () => {
  it('applies every migration once, recorded in schema_migrations, in WAL mode', () => {
    const versions = store.db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
    expect(versions).toEqual(readMigrations().map((m) => ({ version: m.version })));
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    store.close();
    store = openStore(file()); // reopening applies nothing new and does not fail
    expect(store.db.prepare('SELECT count(*) AS n FROM schema_migrations').get()).toEqual({ n: versions.length });
  });

  it('refuses a database newer than the code', () => {
    store.db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)").run();
    store.close();
    expect(() => openStore(file())).toThrow(/schema version 999, newer than this code knows/);
    store = openStore(':memory:');
  });

  it('stores a platform message once, whoever delivers it', () => {
    const room = store.channel('discord', 'c1');
    expect(store.insertMessage(message(room.id, 'hi', ['m1']))).not.toBeNull();
    expect(store.insertMessage(message(room.id, 'hi again', ['m1']))).toBeNull();
    expect(store.history(room.id, 10).map((m) => m.content)).toEqual(['hi']);
    // The same id in another room is another message.
    const other = store.channel('discord', 'c2');
    expect(store.insertMessage(message(other.id, 'hi', ['m1']))).not.toBeNull();
  });

  it('recognises every chunk id of a reply posted in several parts', () => {
    const room = store.channel('discord', 'c1');
    const stored = store.insertMessage(message(room.id, 'long reply', ['p1', 'p2'], 'agent'));
    expect(stored).not.toBeNull();
    expect(store.seen(room.id, 'p1')).toBe(true);
    expect(store.seen(room.id, 'p2')).toBe(true);
    expect(store.insertMessage(message(room.id, 'echo of chunk 2', ['p2'], 'agent'))).toBeNull();
    expect(store.insertMessage(message(room.id, 'echo of both', ['p1', 'p2'], 'agent'))).toBeNull();
    expect(store.lastPlatformMessageId('discord', 'c1')).toBe('p1');
    expect(store.history(room.id, 10)).toHaveLength(1);
  });

  it('returns the last N messages oldest first, with mentions and tool runs', () => {
    const room = store.channel('console', 'main');
    for (let i = 1; i <= 5; i++) store.insertMessage(message(room.id, `m${i} @code`, [`id${i}`]));
    store.insertMessage({
      ...message(room.id, 'ran it', ['id6'], 'agent'),
      toolRuns: [{ tool: 'bash', input: 'ls', output: 'a.csv' }],
    });
    const last = store.history(room.id, 3);
    expect(last.map((m) => m.content)).toEqual(['m4 @code', 'm5 @code', 'ran it']);
    expect(last[0]?.mentions).toEqual(['code']);
    expect(last[2]?.toolRuns).toEqual([{ tool: 'bash', input: 'ls', output: 'a.csv' }]);
  });

  it('keeps messages, turn state and DM ownership across a restart', () => {
    const room = store.channel('discord', 'dm1', 'code');
    store.insertMessage(message(room.id, 'hello', ['a']));
    store.setTurnState(room.id, { consecutive: 7, control: 'humans', reason: 'turn limit' });
    store.close();
    store = openStore(file());
    const again = store.channel('discord', 'dm1');
    expect(again).toMatchObject({ id: room.id, directAgent: 'code' });
    expect(store.turnState(again.id)).toEqual({ consecutive: 7, control: 'humans', reason: 'turn limit' });
    expect(store.history(again.id, 10).map((m) => m.content)).toEqual(['hello']);
    expect(store.insertMessage(message(again.id, 'hello', ['a']))).toBeNull();
  });

  it("clears a room's history but still recognises its old messages", () => {
    const room = store.channel('console', 'main');
    store.insertMessage(message(room.id, 'old', ['x']));
    store.clearHistory(room.id);
    expect(store.history(room.id, 10)).toEqual([]);
    expect(store.insertMessage(message(room.id, 'old', ['x']))).toBeNull();
  });

  it('tells whom a platform message and its stored edits addressed', () => {
    const room = store.channel('discord', 'c1');
    expect(store.addressedBy(room.id, '123')).toBeUndefined();
    store.insertMessage(message(room.id, 'hi @code', ['123']));
    store.insertMessage({ ...message(room.id, '(edited) hi @code @data', ['123:edit:5']), mentions: ['data'] });
    store.insertMessage({ ...message(room.id, 'other @code', ['1234:edit:5']), mentions: ['reviewer'] });
    expect(store.addressedBy(room.id, '123')).toEqual(['code', 'data']);
    expect(store.addressedBy(store.channel('discord', 'c2').id, '123')).toBeUndefined();
  });
});
