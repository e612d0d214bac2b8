import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GoalRecord } from '../../bench/lib/goals.js';
import { type BenchOutcome, listBenches, runBench, summary } from '../../bench/lib/runner.js';
import { until } from '../helpers/until.js';

const root = path.resolve(import.meta.dirname, '../..');
const benchDir = path.join(root, 'bench');
const fixture = (name: string) => path.join(import.meta.dirname, 'fixtures', `${name}.ts`);

/** Runs a file through the runner, collecting its output instead of printing it. */
async function run(file: string, smoke: boolean, timeLimitMs?: number): Promise<BenchOutcome & { output: string }> {
  let output = '';
  const outcome = await runBench(file, {
    smoke,
    ...(timeLimitMs === undefined ? {} : { timeLimitMs }),
    output: (chunk) => {
      output += chunk;
    },
  });
  return { ...outcome, output };
}

/** Whether a process is gone (a zombie left for a reaper counts as gone). */
function gone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

describe('the benchmarks in bench/', () => {
  it('each reads the smoke flag and reports its figures against a goal', () => {
    const names = listBenches(benchDir);
    expect(names).toContain('core');
    expect(names).not.toContain('run');
    for (const name of names) {
      const source = readFileSync(path.join(benchDir, `${name}.ts`), 'utf8');
      expect(source, `bench/${name}.ts sizes its run with sized() from ./lib/mode.js`).toMatch(
        /import \{[^}]*\bsized\b[^}]*\} from '\.\/lib\/mode\.js'/,
      );
      expect(source, `bench/${name}.ts calls sized()`).toMatch(/\bsized\(/);
      expect(source, `bench/${name}.ts reports its goal with reportGoal()`).toMatch(/\breportGoal\(\{/);
    }
  });

  it('runs bench/core.ts in smoke mode with small counts and prints its figures beside their goals, unjudged', async () => {
    const result = await run(path.join(benchDir, 'core.ts'), true);
    expect(result.status, result.output).toBe('ok');
    expect(result.output).toContain('Store: 3 alternating rounds of 1000 human messages');
    const store = result.goals.find((g) => g.figure.startsWith('store:'));
    expect(store?.figure).toMatch(/^store: \d+\.\d\dx of a bare better-sqlite3 INSERT loop$/);
    expect(store?.goal).toBe('>= 0.8x');
    expect(store?.smoke).toBe(true);
    expect(result.output).toContain(`${store?.figure} (goal >= 0.8x): not judged (smoke run)`);
  }, 120_000);
});

describe('bench/lib/runner', () => {
  it('passes --smoke on and collects every goal the benchmark reported, met or missed', async () => {
    const result = await run(fixture('reports'), true);
    expect(result.status, result.output).toBe('ok');
    expect(result.output).toContain('mode: smoke');
    expect(result.goals.map((g) => [g.figure, g.goal, g.met, g.smoke])).toEqual([
      ['fast path: 3.00x of the baseline', '>= 2x', true, true],
      ['slow path: 0.40x of the baseline', '>= 0.7x', false, true],
    ]);
    const full = await run(fixture('reports'), false);
    expect(full.output).toContain('mode: full');
    expect(full.output).toContain('slow path: 0.40x of the baseline (goal >= 0.7x): MISSED');
  }, 120_000);

  it('counts a benchmark that throws as failed, with its exit code', async () => {
    const result = await run(fixture('throws'), false);
    expect(result.status).toBe('failed');
    expect(result.detail).toBe('exited with 1');
    expect(result.output).toContain('the fake endpoint did not answer');
  }, 120_000);

  it('counts a benchmark that exits 0 without reporting a figure against a goal as failed', async () => {
    const result = await run(fixture('silent'), false);
    expect(result.status).toBe('failed');
    expect(result.detail).toBe('reported no figure against a goal');
  }, 120_000);

  it('kills a benchmark that outlives its time limit, with the processes it started, and counts it as timed out', async () => {
    const result = await run(fixture('hangs'), true, 15_000);
    expect(result.status).toBe('timed out');
    expect(result.detail).toBe('killed after 15 s');
    const pid = Number(/helper pid (\d+)/.exec(result.output)?.[1]);
    expect(pid, `the fixture started its helper within 15 s: ${result.output}`).toBeGreaterThan(0);
    await until(() => gone(pid));
  }, 120_000);
});

describe('the summary of a run', () => {
  const goal = (figure: string, met: boolean, smoke: boolean): GoalRecord => ({
    kind: 'goal',
    bench: 'core',
    figure,
    goal: '>= 0.7x',
    met,
    smoke,
  });

  it('lists each figure beside its goal, then the goals missed and the benchmarks broken, in a full run', () => {
    const text = summary(
      [
        { name: 'core', status: 'ok', seconds: 12, goals: [goal('store: 0.39x of a bare loop', false, false)] },
        { name: 'slack', status: 'timed out', detail: 'killed after 300 s', seconds: 300, goals: [] },
      ],
      false,
    );
    expect(text).toContain('- store: 0.39x of a bare loop | goal >= 0.7x | MISSED');
    expect(text).toContain('Goals missed (1):\n  store: 0.39x of a bare loop (goal >= 0.7x)');
    expect(text).toContain('Benchmarks broken (1): slack (timed out: killed after 300 s)');
  });

  it('judges nothing in a smoke run', () => {
    const text = summary(
      [{ name: 'core', status: 'ok', seconds: 3, goals: [goal('store: 0.39x of a bare loop', false, true)] }],
      true,
    );
    expect(text).toContain('- store: 0.39x of a bare loop | goal >= 0.7x | not judged (smoke run)');
    expect(text).not.toContain('Goals missed');
    expect(text).toContain('Benchmarks broken: none');
  });
});

describe('npm run bench', () => {
  it('refuses an unknown benchmark in one line naming it and the benchmarks there are', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(benchDir, 'run.ts'), 'nope'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([
      `npm run bench: unknown benchmark nope; benchmarks: ${listBenches(benchDir).join(', ')}; option: --smoke`,
    ]);
  }, 120_000);
});
