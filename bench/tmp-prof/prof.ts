import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { startFakeOpenAI } from '../../test/fakes/openai-server/index.js';
const rooms = Number(process.argv[2] ?? 100);
const mode = process.argv[3] ?? 'bridge';
const llm = await startFakeOpenAI();
llm.respond(() => ({ content: 'on it', delayMs: 200 }));
const job = { part: 'rooms', rooms, seconds: 8, llm: llm.baseURL, history: 50, mode };
const proc = spawn(process.execPath, ['--import', 'tsx', ...(process.env.SQLCOUNT ? ['--import', './bench/tmp-prof/sqlcount.ts'] : []), '--expose-gc', ...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), 'bench/lib/limits-child.ts'], {
  env: { ...process.env, BENCH_CHILD: JSON.stringify(job) }, stdio: ['pipe', 'pipe', 'inherit'] });
let out = ''; proc.stdout.setEncoding('utf8'); proc.stdout.on('data', (c) => { out += c; });
await once(proc, 'exit');
const line = out.split('\n').find((l) => l.startsWith('RESULT '));
const r = JSON.parse(line!.slice(7));
const added = [...r.added].sort((a: number, b: number) => a - b);
console.log(`${mode} rooms ${rooms}: ${(r.answered / r.windowS).toFixed(0)} msg/s, added p50 ${added[Math.floor(added.length / 2)].toFixed(1)} ms p99 ${added[Math.floor(added.length * 0.99)].toFixed(1)}, lost ${r.lost} doubled ${r.doubled} errors ${r.errors}`);
await llm.close();
