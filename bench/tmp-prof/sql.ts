import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { migrate } from '../../src/store/sqlite/migrate.js';
import { INSERT_MESSAGE } from '../../src/store/sqlite/rows.js';
const dir = mkdtempSync('/tmp/sqlb-');
const db = new Database(dir + '/a.db'); db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); if (process.env.FK) db.pragma('foreign_keys = ON');
migrate(db);
db.prepare("INSERT INTO channels (platform, channel, created_at) VALUES ('bench', 'room', 0)").run();
const bare = db.prepare(`INSERT INTO messages (channel_id, platform_message_id, author, author_id, kind, content, mentions, created_at)
       VALUES (1, ?, 'user', 'u1', 'human', ?, '[]', ?)`);
const full = db.prepare(INSERT_MESSAGE);
const noExists = db.prepare(INSERT_MESSAGE.replace(/WHERE NOT EXISTS \(SELECT 1 FROM message_refs WHERE channel_id = \? AND platform_message_id = \?\)/, 'WHERE ? IS NOT NULL AND ? IS NOT NULL'));
const routed = JSON.stringify({ kind: 'message', woke: [], skipped: [{ agent: 'agent0', why: 'not mentioned' }, { agent: 'agent1', why: 'not mentioned' }, { agent: 'agent2', why: 'not mentioned' }] });
let n = 0;
const N = 20000;
const t = (label: string, fn: () => void) => { const s = process.hrtime.bigint(); for (let i = 0; i < N; i++) fn(); console.log(label.padEnd(30), (Number(process.hrtime.bigint() - s) / 1e3 / N).toFixed(2), 'µs'); };
for (let r = 0; r < 3; r++) {
  t('bare', () => { n++; bare.run(`m${n}`, `message number ${n}`, Date.now()); });
  t('full', () => { n++; full.run(1, `m${n}`, n, null, 'user', 'u1', 'human', `message number ${n}`, '[]', '[]', null, null, null, Date.now(), routed, Date.now(), 1, `m${n}`); });
  t('full, no routed', () => { n++; full.run(1, `m${n}`, n, null, 'user', 'u1', 'human', `message number ${n}`, '[]', '[]', null, null, null, Date.now(), null, null, 1, `m${n}`); });
  t('no exists', () => { n++; noExists.run(1, `m${n}`, n, null, 'user', 'u1', 'human', `message number ${n}`, '[]', '[]', null, null, null, Date.now(), routed, Date.now(), 1, `m${n}`); });
}
