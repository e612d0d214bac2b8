/**
 * Long conformance runs: `npm run fuzz -- --runs N --seed S` (a random seed by default, printed first). A failure
 * prints the shrunk script; keep it as a fixed example in examples.ts.
 */
import { check } from './property.js';

function option(name: string): number | undefined {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : undefined;
  return value !== undefined && Number.isFinite(value) ? value : undefined;
}

const seed = option('seed') ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const runs = option('runs') ?? 50_000;
console.log(`fuzz: ${runs} conversations from seed ${seed}`);
const started = Date.now();
const outcome = check({ seed, runs });
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (outcome.failure) {
  console.log(outcome.failure);
  process.exitCode = 1;
} else {
  console.log(`fuzz: ${outcome.runs} conversations agree (${seconds} s)`);
  for (const [what, n] of [...outcome.coverage].sort()) console.log(`  ${what}: ${n}`);
}
