/**
 * Runs benchmark files, each in a process of its own with an overall time limit, and collects what each reported
 * (bench/lib/goals.ts). A benchmark that throws, exits non-zero, outlives its limit or reports no figure against
 * a goal is broken; a missed goal is not (it is printed in the summary).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BenchRecord, type GoalRecord, type SkipRecord, verdict } from './goals.js';

/** Overall time limits: long enough for a full run on a busy 2-core machine, short enough to catch a hang. */
export const TIME_LIMIT_MS = { full: 5 * 60_000, smoke: 3 * 60_000 } as const;

export interface BenchOutcome {
  readonly name: string;
  /** `ok`: it ran (goals met or missed); `skipped`: it said why it could not run here; else it broke. */
  readonly status: 'ok' | 'skipped' | 'failed' | 'timed out';
  /** Why it broke, or why it was skipped. */
  readonly detail?: string;
  readonly seconds: number;
  readonly goals: readonly GoalRecord[];
}

export interface RunOptions {
  readonly smoke: boolean;
  readonly timeLimitMs?: number;
  /** Where the benchmark's output goes (the terminal by default). */
  readonly output?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

/** The benchmarks in `dir`: every `.ts` file there but run.ts, by name, sorted. */
export function listBenches(dir: string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
    .map((file) => file.replace(/\.ts$/, ''))
    .sort();
}

const running = new Set<ChildProcess>();

/** Kills a benchmark's whole process group (it may have started processes of its own). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Kills every benchmark still running (on Ctrl-C or SIGTERM to the runner). */
export function killRunning(): void {
  for (const child of running) killGroup(child);
}

function readRecords(file: string): BenchRecord[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as BenchRecord);
}

/** Runs `file` (`--smoke` passed on in a smoke run) and resolves with how it went. */
export async function runBench(file: string, options: RunOptions): Promise<BenchOutcome> {
  const name = path.basename(file, '.ts');
  const limit = options.timeLimitMs ?? (options.smoke ? TIME_LIMIT_MS.smoke : TIME_LIMIT_MS.full);
  const output = options.output ?? ((chunk, stream) => process[stream].write(chunk));
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-bench-results-'));
  const results = path.join(dir, 'results.jsonl');
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...(options.smoke ? ['--smoke'] : [])], {
    env: { ...process.env, BENCH_RESULTS: results },
    // Its own process group, so a hang is ended with everything it started.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => output(chunk, 'stdout'));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => output(chunk, 'stderr'));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, limit);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timer);
  // Whatever it started and left behind goes with it; then its last output is read (bounded, in case something
  // outside its group still holds the pipes).
  killGroup(child);
  running.delete(child);
  if (!exit.error) await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
  const seconds = (performance.now() - started) / 1000;
  const records = readRecords(results);
  rmSync(dir, { recursive: true, force: true });
  const goals = records.filter((r): r is GoalRecord => r.kind === 'goal');
  const skip = records.find((r): r is SkipRecord => r.kind === 'skipped');
  const base = { name, seconds, goals };
  if (timedOut) return { ...base, status: 'timed out', detail: `killed after ${Math.round(limit / 1000)} s` };
  if (exit.error) return { ...base, status: 'failed', detail: `could not start: ${exit.error.message}` };
  if (exit.code !== 0) return { ...base, status: 'failed', detail: `exited with ${exit.code ?? exit.signal}` };
  if (skip) return { ...base, status: 'skipped', detail: skip.reason };
  if (goals.length === 0) return { ...base, status: 'failed', detail: 'reported no figure against a goal' };
  return { ...base, status: 'ok' };
}

/** Runs each named benchmark of `dir` in turn, printing a header before each. */
export async function runBenches(dir: string, names: readonly string[], options: RunOptions): Promise<BenchOutcome[]> {
  const output = options.output ?? ((chunk, stream) => process[stream].write(chunk));
  const outcomes: BenchOutcome[] = [];
  for (const name of names) {
    output(`\n=== bench/${name}.ts${options.smoke ? ' (smoke)' : ''} ===\n`, 'stdout');
    const outcome = await runBench(path.join(dir, `${name}.ts`), { ...options, output });
    if (outcome.status === 'failed' || outcome.status === 'timed out') {
      output(`bench/${name}.ts ${outcome.status}: ${outcome.detail}\n`, 'stdout');
    }
    outcomes.push(outcome);
  }
  return outcomes;
}

/** Whether any benchmark broke (threw, exited non-zero, hung, or reported nothing). */
export function broken(outcomes: readonly BenchOutcome[]): BenchOutcome[] {
  return outcomes.filter((o) => o.status === 'failed' || o.status === 'timed out');
}

/** The run's summary: per benchmark how it went, each figure beside its goal, then what was missed or broke. */
export function summary(outcomes: readonly BenchOutcome[], smoke: boolean): string {
  const lines = [`Summary (${smoke ? 'smoke run: figures printed, not judged' : 'full run'}):`];
  const width = Math.max(5, ...outcomes.map((o) => o.name.length));
  for (const outcome of outcomes) {
    const head = `  ${outcome.name.padEnd(width)}  ${outcome.status.padEnd(9)} ${outcome.seconds.toFixed(0).padStart(4)} s`;
    if (outcome.status !== 'ok') lines.push(`${head}  ${outcome.detail ?? ''}`);
    else lines.push(head);
    for (const goal of outcome.goals) {
      lines.push(`  ${''.padEnd(width)}  - ${goal.figure} | goal ${goal.goal} | ${verdict(goal)}`);
    }
  }
  const missed = outcomes.flatMap((o) =>
    o.goals.filter((g) => !g.smoke && !g.met).map((g) => `${g.figure} (goal ${g.goal})`),
  );
  if (!smoke) {
    lines.push(missed.length === 0 ? 'Goals missed: none' : `Goals missed (${missed.length}):`);
    for (const line of missed) lines.push(`  ${line}`);
  }
  const bad = broken(outcomes);
  lines.push(
    bad.length === 0
      ? 'Benchmarks broken: none'
      : `Benchmarks broken (${bad.length}): ${bad.map((o) => `${o.name} (${o.status}: ${o.detail ?? ''})`).join('; ')}`,
  );
  return lines.join('\n');
}
