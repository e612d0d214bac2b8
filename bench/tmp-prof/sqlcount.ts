import Database from 'better-sqlite3';
const counts = new Map<string, { n: number; ns: bigint }>();
const proto = Database.prototype as any;
const origPrepare = proto.prepare;
proto.prepare = function (sql: string) {
  const st = origPrepare.call(this, sql);
  for (const m of ['run', 'get', 'all']) {
    const f = st[m].bind(st);
    st[m] = (...a: unknown[]) => { const s = process.hrtime.bigint(); try { return f(...a); } finally { const k = `${m} ${sql.replace(/\s+/g, ' ').slice(0, 100)}`; const c = counts.get(k) ?? { n: 0, ns: 0n }; c.n++; c.ns += process.hrtime.bigint() - s; counts.set(k, c); } };
  }
  return st;
};
const origExit = process.exit;
(process as any).exit = (code?: number) => {
  const rows = [...counts].sort((a, b) => Number(b[1].ns - a[1].ns)).slice(0, 25);
  for (const [k, c] of rows) process.stderr.write(`${String(c.n).padStart(7)} ${(Number(c.ns) / 1e6).toFixed(0).padStart(6)} ms  ${k}\n`);
  origExit(code);
};
