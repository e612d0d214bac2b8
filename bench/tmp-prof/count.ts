import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { createBridge } from '../../src/bridge/index.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/index.js';
import { testConfig } from '../../test/helpers/config.js';
const counts = new Map<string, { n: number; ns: bigint }>();
const proto = (Database.prototype as any);
const origPrepare = proto.prepare;
proto.prepare = function (sql: string) {
  const st = origPrepare.call(this, sql);
  for (const m of ['run', 'get', 'all']) {
    const f = st[m].bind(st);
    st[m] = (...a: unknown[]) => { const s = process.hrtime.bigint(); try { return f(...a); } finally { const k = `${m} ${sql.replace(/\s+/g, ' ').slice(0, 90)}`; const c = counts.get(k) ?? { n: 0, ns: 0n }; c.n++; c.ns += process.hrtime.bigint() - s; counts.set(k, c); } };
  }
  return st;
};
const dir = mkdtempSync('/tmp/cnt-');
const store = openStore(path.join(dir, 'b.db'));
let sink: any;
const adapter: any = { platform: 'bench', start: async (s: any) => { sink = s; }, stop: async () => {}, post: async () => ({ messageIds: [] }) };
const config = testConfig({ agents: Array.from({ length: 3 }, (_, i) => ({ name: `agent${i}`, activation: 'mention' as const })) });
const sandbox = { exec: async () => ({ output: '', exitCode: 0, timedOut: false }), close: async () => {} };
const bridge = createBridge({ config, store, sandbox, adapters: [adapter], logger: silentLogger() } as any);
await bridge.start();
for (let i = 0; i < 200; i++) await sink.receive({ platform: 'bench', channel: 'room', messageId: `w${i}`, author: { id: 'u1', name: 'user', kind: 'human' }, text: `warm ${i}` });
await bridge.idle();
counts.clear();
const N = 10000;
const s = process.hrtime.bigint();
for (let i = 0; i < N; i++) await sink.receive({ platform: 'bench', channel: 'room', messageId: `m${i}`, author: { id: 'u1', name: 'user', kind: 'human' }, text: `message number ${i}` });
await bridge.idle();
const total = Number(process.hrtime.bigint() - s) / 1e3 / N;
console.log('per message total', total.toFixed(2), 'µs');
for (const [k, c] of [...counts].sort((a, b) => Number(b[1].ns - a[1].ns))) console.log((c.n / N).toFixed(2).padStart(6), '/msg', (Number(c.ns) / 1e3 / N).toFixed(2).padStart(7), 'µs/msg ', k);
await bridge.stop(); await store.close();
