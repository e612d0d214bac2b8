/**
 * `npm run bench`: runs every benchmark in bench/ one after another, each in its own process with an overall time
 * limit (5 minutes; 3 in a smoke run). Each prints its figures, how they were obtained, a ratio against a baseline
 * measured in the same run, and its goals; a summary at the end lists every figure beside its goal.
 *   npm run bench -- core sandbox     only those
 *   npm run bench -- --smoke          the same code paths with small counts; figures printed, not judged
 * Exits non-zero when a benchmark broke (threw, exited non-zero, hung, reported nothing); a missed goal is printed
 * in the summary but does not fail the run.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { broken, killRunning, listBenches, runBenches, summary } from './lib/runner.js';

const dir = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const options = args.filter((arg) => arg.startsWith('-') && arg !== '--smoke');
const wanted = args.filter((arg) => !arg.startsWith('-'));
const all = listBenches(dir);
const unknown = wanted.filter((name) => !all.includes(name));
if (options.length > 0 || unknown.length > 0) {
  const what = [...options.map((o) => `option ${o}`), ...unknown.map((n) => `benchmark ${n}`)].join(', ');
  console.error(`npm run bench: unknown ${what}; benchmarks: ${all.join(', ')}; option: --smoke`);
  process.exit(2);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killRunning();
    process.exit(130);
  });
}

const outcomes = await runBenches(
  dir,
  all.filter((name) => wanted.length === 0 || wanted.includes(name)),
  { smoke },
);
console.log(`\n${summary(outcomes, smoke)}`);
process.exit(broken(outcomes).length > 0 ? 1 : 0);
