/**
 * A benchmark's figures against its goals: printed beside the figure, and (when bench/run.ts asks, through the
 * file named by BENCH_RESULTS) recorded as one JSON line each, for the run's summary.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { smoke } from './mode.js';

/** One figure and the goal it was measured against. */
export interface GoalRecord {
  readonly kind: 'goal';
  readonly bench: string;
  /** What was measured and its value, e.g. `store: 0.39x of a bare better-sqlite3 INSERT loop`. */
  readonly figure: string;
  /** The goal, e.g. `>= 0.7x`. */
  readonly goal: string;
  readonly met: boolean;
  /** A smoke run's figures are not judged. */
  readonly smoke: boolean;
}

/** A benchmark that could not run here and says why (the sandbox bench without Docker, in a smoke run). */
export interface SkipRecord {
  readonly kind: 'skipped';
  readonly bench: string;
  readonly reason: string;
}

export type BenchRecord = GoalRecord | SkipRecord;

const bench = path.basename(process.argv[1] ?? 'bench', '.ts');

function record(entry: BenchRecord): void {
  const file = process.env.BENCH_RESULTS;
  if (file) appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

/** How a goal reads in the output: met / MISSED in a full run, not judged in a smoke run. */
export function verdict(entry: Pick<GoalRecord, 'met' | 'smoke'>): string {
  if (entry.smoke) return 'not judged (smoke run)';
  return entry.met ? 'met' : 'MISSED';
}

/**
 * Prints `figure (goal ...): met | MISSED` and, indented, how the figure was obtained; records it for the summary.
 */
export function reportGoal(entry: { figure: string; goal: string; met: boolean; how: string }): void {
  const goal: GoalRecord = { kind: 'goal', bench, figure: entry.figure, goal: entry.goal, met: entry.met, smoke };
  console.log(`${goal.figure} (goal ${goal.goal}): ${verdict(goal)}`);
  console.log(`  how: ${entry.how}`);
  record(goal);
}

/** Prints one line saying why the benchmark did not run, and records it. */
export function reportSkipped(reason: string): void {
  console.log(`skipped: ${reason}`);
  record({ kind: 'skipped', bench, reason });
}
