/**
 * Sandbox benchmark (issue 3): warm round-trip of `true` through the command runner (the fast
 * path) and through one Docker exec per command (its fallback), beside the `docker exec` CLI on
 * the same container in the same run; the cold start of a channel's container; 20 channels
 * executing at once; what the workspace watch (SANDBOX_DISK, SANDBOX_FILES) costs a warm `true` and a busy
 * half-second command in a workspace of 10,000 files, beside the same with the limits off; bind-mounted
 * workspaces beside volume ones (SANDBOX_WORKSPACES): a warm `true`, and 1 MB written and read back.
 * Goal: the runner at least 3x faster than the CLI at p50, and under 50 ms. Needs a running
 * engine and the sandbox image; a smoke run without them says so in one line and exits 0 (unless CI is set).
 *   npm run bench:sandbox [-- --smoke]   (RUNS=200 by default in a full run)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Dockerode from 'dockerode';
import { checkDocker, createDockerSandbox } from '../sandbox/index.js';
import { readSettings } from '../src/config/index.js';
import { silentLogger } from '../src/log.js';
import type { Sandbox } from '../src/ports.js';
import { workspaceFilesFor } from '../src/tools/workspace-path.js';
import { isCi } from '../test/sandbox/docker-setup.js';
import { reportGoal, reportSkipped } from './lib/goals.js';
import { sized, smoke } from './lib/mode.js';

const RUNS = sized(Number(process.env.RUNS ?? 200), 20);
const WARM_UP = sized(10, 3);
const CHANNELS = sized(20, 4);
const COLD_RUNS = sized(5, 2);
const WARM_ROUNDS = sized(5, 2);
const BUSY_RUNS = sized(10, 2);
const WATCHED_FILES = sized(10_000, 1_000);
/** About half a second of one CPU in bash, a command long enough for the watch to look several times. */
const BUSY = 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done';
/** The container's CPU time so far in ns (cgroup v1 cpuacct, or v2 cpu.stat): what a command cost, whatever the load. */
const CPU_USED =
  'c=/sys/fs/cgroup/cpuacct/cpuacct.usage; if [ -r $c ]; then cat $c; ' +
  "else echo $(( $(sed -n 's/^usage_usec //p' /sys/fs/cgroup/cpu.stat) * 1000 )); fi";
const WORKSPACE_RUNS = sized(50, 5);
const options = { timeoutMs: 30_000 };
/** The image to run: SANDBOX_IMAGE, as for the bridge and the tests, or the default. */
const image = { SANDBOX_IMAGE: process.env.SANDBOX_IMAGE };

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function summary(samples: readonly number[]): { p50: number; p95: number } {
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

async function time(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

/** The engine's floor: a bare exec of `true` (create, start, wait for the stream, inspect), no wrapper. */
async function bareExec(container: Dockerode.Container): Promise<void> {
  const exec = await container.exec({ Cmd: ['true'], AttachStdout: true, AttachStderr: true });
  const stream = (await exec.start({ hijack: true, stdin: false })) as NodeJS.ReadableStream;
  stream.resume();
  await new Promise((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
  await exec.inspect();
}

function dockerCli(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`docker ${args.join(' ')} exited ${code}`)),
    );
  });
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roundtable-bench-'));
  const docker = new Dockerode();
  const settings = readSettings({ ...image, DATA_DIR: dataDir, SANDBOX_IDLE_MINUTES: '0' });
  const sandbox: Sandbox = createDockerSandbox({ settings, logger: silentLogger(), docker });
  const viaExec: Sandbox = createDockerSandbox({ settings, logger: silentLogger(), docker, commandRunner: false });
  const unlimited = readSettings({
    ...image,
    DATA_DIR: dataDir,
    SANDBOX_IDLE_MINUTES: '0',
    SANDBOX_DISK: '0',
    SANDBOX_FILES: '0',
  });
  const unwatched: Sandbox = createDockerSandbox({ settings: unlimited, logger: silentLogger(), docker });
  try {
    const key = 'console:bench';
    const execKey = 'console:bench-exec';
    await sandbox.exec(key, 'true', options);
    await viaExec.exec(execKey, 'true', options);
    const [info] = await docker.listContainers({
      filters: { label: [`roundtable.channel=${key}`, `roundtable.scope=${dataDir}`] },
    });
    if (!info) throw new Error('benchmark container not found');

    // Interleaved, so all see the same engine load; 10 warm-up runs each first.
    for (let i = 0; i < WARM_UP; i += 1) {
      await sandbox.exec(key, 'true', options);
      await viaExec.exec(execKey, 'true', options);
      await dockerCli(['exec', info.Id, 'bash', '-c', 'true']);
    }
    const container = docker.getContainer(info.Id);
    const runner: number[] = [];
    const api: number[] = [];
    const cli: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      runner.push(await time(() => sandbox.exec(key, 'true', options)));
      api.push(await time(() => viaExec.exec(execKey, 'true', options)));
      cli.push(await time(() => dockerCli(['exec', info.Id, 'bash', '-c', 'true'])));
      bare.push(await time(() => bareExec(container)));
    }
    const watch = await watchCost(sandbox, unwatched);
    const runnerStats = summary(runner);
    const bareStats = summary(bare);
    const apiStats = summary(api);
    const cliStats = summary(cli);

    const cold: number[] = [];
    for (let i = 0; i < COLD_RUNS; i += 1) {
      const coldKey = `console:bench-cold-${i}`;
      cold.push(await time(() => sandbox.exec(coldKey, 'true', options)));
      await sandbox.reset?.(coldKey);
    }

    const keys = Array.from({ length: CHANNELS }, (_, i) => `console:bench-many-${i}`);
    const coldMany = await time(() => Promise.all(keys.map((k) => sandbox.exec(k, 'true', options))));
    const warmMany: number[] = [];
    for (let round = 0; round < WARM_ROUNDS; round += 1) {
      warmMany.push(await time(() => Promise.all(keys.map((k) => sandbox.exec(k, 'echo $HOSTNAME', options)))));
    }

    console.log(`Sandbox benchmark (image ${settings.SANDBOX_IMAGE}, ${RUNS} runs each, interleaved)`);
    console.log('warm exec of `true`, one channel:');
    console.log(`  command runner (default)    p50 ${ms(runnerStats.p50)}  p95 ${ms(runnerStats.p95)}`);
    console.log(`  one exec per command (API)  p50 ${ms(apiStats.p50)}  p95 ${ms(apiStats.p95)}  (the fallback)`);
    console.log(`  docker exec CLI             p50 ${ms(cliStats.p50)}  p95 ${ms(cliStats.p95)}`);
    console.log(
      `  bare exec API               p50 ${ms(bareStats.p50)}  p95 ${ms(bareStats.p95)}  (no wrapper: one exec's floor)`,
    );
    const ratio = cliStats.p50 / runnerStats.p50;
    console.log(`  ratio CLI / runner (p50)    ${ratio.toFixed(2)}x`);
    console.log(`  ratio CLI / exec API (p50)  ${(cliStats.p50 / apiStats.p50).toFixed(2)}x`);
    console.log(
      `workspace watch (SANDBOX_DISK ${settings.SANDBOX_DISK}, SANDBOX_FILES ${settings.SANDBOX_FILES}) against limits off:`,
    );
    const line = (label: string, pair: Pair) =>
      console.log(`  ${label.padEnd(34)} p50 ${ms(pair.on.p50)} vs ${ms(pair.off.p50)}  (${delta(pair)})`);
    line(`warm \`true\`, empty, ${RUNS} runs`, watch.empty);
    line(`warm \`true\`, ${WATCHED_FILES} files, ${RUNS} runs`, watch.full);
    line(`busy ~0.5 s, ${WATCHED_FILES} files, ${BUSY_RUNS} runs`, watch.busy);
    line('  the same, container CPU time', watch.busyCpu);
    console.log(`cold start (create + start + first command), ${COLD_RUNS} runs: p50 ${ms(percentile(cold, 50))}`);
    console.log(
      `${CHANNELS} channels at once: cold ${ms(coldMany)}; warm p50 ${ms(percentile(warmMany, 50))} per round`,
    );
    console.log(
      'How: performance.now() around sandbox.exec() with the runner (a request on the open stream, bash -c\n' +
        'spawned in its own session, output and exit back) and without it (exec create + start + inspect, with\n' +
        'the wrapper that makes the command killable), and around a spawned `docker exec <id> bash -c true`.',
    );
    await workspaceModes(dataDir, docker);
    reportGoal({
      figure: `sandbox: the command runner ${ratio.toFixed(2)}x faster than the docker exec CLI at p50, runner p50 ${ms(runnerStats.p50)}`,
      goal: '>= 3x and < 50 ms',
      met: ratio >= 3 && runnerStats.p50 < 50,
      how: `a warm \`true\` on one channel's container, ${RUNS} interleaved runs each after ${WARM_UP} warm-up, in this run`,
    });
  } finally {
    await unwatched.close();
    await viaExec.close();
    await sandbox.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Pair {
  readonly on: { p50: number; p95: number };
  readonly off: { p50: number; p95: number };
}

function delta(pair: Pair): string {
  const diff = pair.on.p50 - pair.off.p50;
  return `${diff >= 0 ? '+' : ''}${ms(diff)}, ${((diff / pair.off.p50) * 100).toFixed(1)}%`;
}

/**
 * The workspace watch's cost, interleaved against the same runner with the limits off: a warm `true`, which ends
 * before the first look and so pays only the measurement at its end, in an empty workspace and in one of
 * WATCHED_FILES files; and a busy command in the latter, which the watch looks at every 0.1 s while it runs, in
 * wall time and in the container's CPU time (which a busy machine does not blur).
 */
async function watchCost(
  watched: Sandbox,
  unwatched: Sandbox,
): Promise<Record<'empty' | 'full' | 'busy' | 'busyCpu', Pair>> {
  const keys = { empty: ['console:bench', 'console:bench-unwatched'], full: ['console:bench-on', 'console:bench-off'] };
  const fill = `mkdir -p many && cd many && seq 1 ${WATCHED_FILES} | xargs touch`;
  await watched.exec(keys.full[0] as string, fill, options);
  await unwatched.exec(keys.full[1] as string, fill, options);
  const cpu = async (sandbox: Sandbox, key: string): Promise<number> => {
    const before = Number((await sandbox.exec(key, CPU_USED, options)).output);
    await sandbox.exec(key, BUSY, options);
    return (Number((await sandbox.exec(key, CPU_USED, options)).output) - before) / 1e6;
  };
  const pair = async (
    key: 'empty' | 'full',
    measure: (sandbox: Sandbox, key: string) => Promise<number>,
    runs: number,
  ) => {
    const [onKey, offKey] = keys[key] as [string, string];
    const on: number[] = [];
    const off: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      on.push(await measure(watched, onKey));
      off.push(await measure(unwatched, offKey));
    }
    return { on: summary(on), off: summary(off) };
  };
  const wall = (command: string) => (sandbox: Sandbox, key: string) => time(() => sandbox.exec(key, command, options));
  await pair('empty', wall('true'), WARM_UP);
  await pair('full', wall('true'), WARM_UP);
  return {
    empty: await pair('empty', wall('true'), RUNS),
    full: await pair('full', wall('true'), RUNS),
    busy: await pair('full', wall(BUSY), BUSY_RUNS),
    busyCpu: await pair('full', cpu, BUSY_RUNS),
  };
}

/**
 * Bind-mounted workspaces beside volumes, interleaved: a warm `true` (the mount makes no difference to a command),
 * and 1 MB written into the workspace and read back the way the file tools and uploads do it (host files for a
 * bind mount; the engine's archive API for a volume).
 */
async function workspaceModes(dataDir: string, docker: Dockerode): Promise<void> {
  const megabyte = Buffer.alloc(1024 * 1024, 'x');
  const modes = await Promise.all(
    (['bind', 'volume'] as const).map(async (mode) => {
      const settings = readSettings({
        ...image,
        DATA_DIR: dataDir,
        SANDBOX_IDLE_MINUTES: '0',
        SANDBOX_WORKSPACES: mode,
      });
      const box = createDockerSandbox({ settings, logger: silentLogger(), docker });
      const key = `console:bench-workspace-${mode}`;
      await box.exec(key, 'true', options);
      const files = await workspaceFilesFor(box, key);
      if (!files) throw new Error(`no workspace files for ${mode}`);
      return { mode, box, key, files, warm: [] as number[], write: [] as number[], read: [] as number[] };
    }),
  );
  try {
    for (let i = 0; i < WORKSPACE_RUNS; i += 1) {
      for (const m of modes) {
        m.warm.push(await time(() => m.box.exec(m.key, 'true', options)));
        m.write.push(await time(() => m.files.write('one-mb.bin', megabyte)));
        m.read.push(
          await time(async () => {
            const { bytes } = await m.files.read('one-mb.bin', 2 * megabyte.length);
            if (bytes.length !== megabyte.length) throw new Error(`read ${bytes.length} bytes of 1 MB`);
          }),
        );
      }
    }
    console.log(`workspaces (SANDBOX_WORKSPACES), ${WORKSPACE_RUNS} interleaved runs each:`);
    for (const m of modes) {
      const [warm, write, read] = [summary(m.warm), summary(m.write), summary(m.read)];
      console.log(
        `  ${m.mode.padEnd(6)} warm \`true\` p50 ${ms(warm.p50)}  1 MB in p50 ${ms(write.p50)} (p95 ${ms(write.p95)})  ` +
          `1 MB out p50 ${ms(read.p50)} (p95 ${ms(read.p95)})`,
      );
    }
  } finally {
    for (const m of modes) {
      await m.box.reset?.(m.key, { wipeWorkspace: true }).catch(() => undefined);
      await m.box.close();
    }
  }
}

/**
 * Whether the engine answers and the image is there; when not, says so in one line and exits: 0 in a smoke run
 * (the benchmark cannot run here), 1 in a full run or under CI, where the figures are wanted.
 */
async function requireDocker(): Promise<void> {
  const settings = readSettings(image);
  const results = await checkDocker(settings);
  const problem = results.find((r) => !r.ok && (r.item === 'Docker engine' || r.item.startsWith('sandbox image')));
  if (!problem) return;
  const line = problem.item === 'Docker engine' ? problem.detail : `${problem.item} ${problem.detail}`;
  if (smoke && !isCi(process.env.CI)) {
    reportSkipped(`${line} (the sandbox bench needs Docker and the sandbox image; CI=true makes it required)`);
    process.exit(0);
  }
  console.error(`bench/sandbox: ${line}`);
  process.exit(1);
}

await requireDocker();
await main();
