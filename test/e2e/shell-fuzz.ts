/**
 * Long runs of generated conversations through a real bridge: `npx tsx test/e2e/shell-fuzz.ts --platform discord
 * --runs N --seed S --streams K` (a random seed by default, printed first), in batches of `--batch` conversations
 * per stream (the next batch's seeds follow on). A failure prints the shrunk script; once understood, keep it as a
 * fixed example in shell/examples.ts.
 */
import { PLATFORMS, type PlatformName } from './shell/platforms.js';
import { checkInStreams } from './shell/run-shell.js';

function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}
const number = (name: string) => {
  const value = Number(option(name));
  return option(name) !== undefined && Number.isFinite(value) ? value : undefined;
};

const name = (option('platform') ?? 'discord') as PlatformName;
const platform = PLATFORMS[name];
if (!platform) throw new Error(`--platform: one of ${Object.keys(PLATFORMS).join(', ')}`);
const seed = number('seed') ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const runs = number('runs') ?? 500;
const streams = number('streams') ?? 4;
const batch = number('batch') ?? runs;
console.log(`shell fuzz on ${name}: ${runs} conversations in ${streams} streams from seed ${seed}`);
const started = Date.now();
const coverage = new Map<string, number>();
let played = 0;
for (let next = seed; played < runs; next += streams) {
  const outcome = await checkInStreams({
    ...platform,
    seed: next,
    runs: Math.min(batch * streams, runs - played),
    streams,
    shrinkMs: 300_000,
    again: `npx tsx test/e2e/shell-fuzz.ts --platform ${name} --streams 1`,
  });
  played += outcome.runs;
  for (const [what, n] of outcome.coverage) coverage.set(what, (coverage.get(what) ?? 0) + n);
  console.log(`  ${played} conversations agree (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (outcome.failure) {
    console.log(outcome.failure);
    process.exitCode = 1;
    break;
  }
}
if (!process.exitCode) {
  console.log(`shell fuzz: ${played} conversations agree (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  for (const [what, n] of [...coverage].sort()) console.log(`  ${what}: ${n}`);
}
