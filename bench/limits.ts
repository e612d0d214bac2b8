/**
 * Limits of one bridge on this machine, each level measured in the same run beside its baseline:
 *  - rooms: one bridge (SQLite file store) on an in-memory platform with 10, 100 and 500 rooms in conversation
 *    (smoke: 10), one `mention` agent, a model answering after 200 ms; each room first holds 50 messages of
 *    history (smoke: 10; none asks the agent, so every turn reads a full HISTORY_LIMIT window), then every room at
 *    once sends a question, waits for its answer, sends the next, for 8 s (smoke: 1 s). Messages per second, the
 *    latency the bridge adds (answer time less the model's 200 ms) at p50/p99, memory per room (settled RSS and JS
 *    heap after the run less before the history, over the rooms); beside the bare model client at the same concurrency (one awaited completion per message, nothing
 *    stored). Each level runs in a child process (bench/lib/limits-child.ts), the fake model in this one;
 *  - identities: one bridge with 1, 10 and 50 agents (smoke: 1, 3), each its own bot on the Discord fake and its own
 *    app on the Slack fake: time for start() to log them all in, and memory per identity (the settled RSS of the
 *    child with N identities less the one with 1, over N - 1), after 50 messages every identity receives;
 *  - sandboxes: 1, 5 and 20 room sandboxes (smoke: 1, 2) through the project's Docker sandbox, image
 *    SANDBOX_IMAGE: started at once by their first command, then a short command in all of them at once (3 rounds);
 *    start time, the command's latency, and each container's memory from the engine's stats. Without a Docker
 *    engine or the image, one line says so and that part is skipped (CI=true makes it required).
 * Goals: every message answered exactly once at every room level (the ceiling and where the added p99 stays under
 * a second are figures, not goals: they move with the machine's load); the most identities connected within 30 s
 * on each platform; no sandbox command failed.
 *   npm run bench -- limits [--smoke]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Dockerode from 'dockerode';
import { checkDocker, createDockerSandbox } from '../sandbox/index.js';
import { readSettings } from '../src/config/index.js';
import { silentLogger } from '../src/log.js';
import { startFakeDiscord } from '../test/fakes/discord/index.js';
import { startFakeOpenAI } from '../test/fakes/openai-server/index.js';
import { startFakeSlack } from '../test/fakes/slack/index.js';
import { isCi } from '../test/sandbox/docker-setup.js';
import { reportGoal } from './lib/goals.js';
import { type ChildJob, type IdentitiesResult, MODEL_MS, type RoomsResult } from './lib/limits-child.js';
import { sized } from './lib/mode.js';

const ROOM_LEVELS = sized([10, 100, 500], [10]);
const WINDOW_S = sized(8, 1);
/** Each room's history before the conversation: HISTORY_LIMIT's default, so every turn reads a full window. */
const HISTORY = sized(50, 10);
const IDENTITY_LEVELS = sized([1, 10, 50], [1, 3]);
const CHATTER = sized(50, 5);
const SANDBOX_LEVELS = sized([1, 5, 20], [1, 2]);
const SANDBOX_ROUNDS = 3;
/** The shell's goals at 100 and 500 rooms: messages/s beside the bare model client, and the latency added at p50. */
const SHELL_GOALS = new Map([
  [100, { ratio: 0.8, p50: 30 }],
  [500, { ratio: 0.5, p50: 250 }],
]);
/** Comfortable: a person does not notice what the bridge adds (at p99, under a second). */
const COMFORTABLE_P99_MS = 1000;
const child = fileURLToPath(new URL('./lib/limits-child.ts', import.meta.url));

const mb = (bytes: number) => bytes / 1024 / 1024;
const percentile = (values: readonly number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? Number.NaN;

/** Runs one level in a child process; `onReady` runs when it prints READY (its stdin is then the child's). */
async function runChild<T>(
  job: ChildJob,
  onReady?: (stdin: NonNullable<ChildProcess['stdin']>) => Promise<void>,
): Promise<T> {
  const proc = spawn(process.execPath, [...process.execArgv, '--expose-gc', child], {
    env: { ...process.env, BENCH_CHILD: JSON.stringify(job) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  let ready = false;
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (chunk: string) => {
    output += chunk;
    if (!ready && output.includes('READY') && onReady && proc.stdin) {
      ready = true;
      void onReady(proc.stdin);
    }
  });
  const [code] = (await once(proc, 'exit')) as [number | null];
  const line = output.split('\n').find((candidate) => candidate.startsWith('RESULT '));
  if (code !== 0 || !line)
    throw new Error(`limits child (${JSON.stringify(job).slice(0, 80)}) exited ${code}: ${output}`);
  return JSON.parse(line.slice('RESULT '.length)) as T;
}

interface RoomsRow {
  readonly rooms: number;
  readonly bridge: RoomsResult;
  readonly bare: RoomsResult;
  /** Model calls the bridge made, retries included, per message sent. */
  readonly callsPerMessage: number;
}

async function rooms(): Promise<RoomsRow[]> {
  const llm = await startFakeOpenAI();
  llm.respond(() => ({ content: 'on it', delayMs: MODEL_MS }));
  const rows: RoomsRow[] = [];
  try {
    for (const count of ROOM_LEVELS) {
      const job = { part: 'rooms', rooms: count, seconds: WINDOW_S, llm: llm.baseURL, history: HISTORY } as const;
      const calls = llm.requests.length;
      const bridge = await runChild<RoomsResult>({ ...job, mode: 'bridge' });
      const callsPerMessage = (llm.requests.length - calls) / bridge.asked;
      const bare = await runChild<RoomsResult>({ ...job, mode: 'bare' });
      rows.push({ rooms: count, bridge, bare, callsPerMessage });
    }
  } finally {
    await llm.close();
  }
  console.log(
    `Rooms: one bridge (SQLite file store, in-memory platform, one \`mention\` agent, a ${MODEL_MS} ms model); each room`,
  );
  console.log(
    `  holds ${HISTORY} messages of history (stored in the time shown), then every room at once asks, waits for the answer,\n` +
      `  asks again, for ${WINDOW_S} s`,
  );
  console.log(
    '  rooms | history in | messages/s (bare) | added p50 / p99 (bare)          | lost doubled errors | calls/msg | per room: RSS, heap (RSS)',
  );
  for (const { rooms: n, bridge, bare, callsPerMessage } of rows) {
    const rate = (r: RoomsResult) => r.answered / r.windowS;
    const latency = (r: RoomsResult) =>
      `${Math.round(percentile(r.added, 0.5))} / ${Math.round(percentile(r.added, 0.99))} ms`;
    console.log(
      `  ${String(n).padStart(5)} | ${`${(bridge.fillMs / 1000).toFixed(2)} s`.padStart(10)} | ` +
        `${rate(bridge).toFixed(1).padStart(7)} (${rate(bare).toFixed(1).padStart(7)}) | ` +
        `${latency(bridge).padEnd(16)}(${latency(bare)})`.padEnd(32) +
        `| ${String(bridge.lost).padStart(4)} ${String(bridge.doubled).padStart(7)} ${String(bridge.errors).padStart(6)} | ` +
        `${callsPerMessage.toFixed(3).padStart(9)} | ${(mb(bridge.after.rss - bridge.before.rss) / n).toFixed(3)} MB, ` +
        `${(mb(bridge.after.heap - bridge.before.heap) / n).toFixed(3)} MB (${mb(bridge.after.rss).toFixed(0)} MB)`,
    );
    for (const line of bridge.errorLines) console.log(`        error line: ${line}`);
  }
  console.log(
    '  how: messages/s = answers in the window over its length; added = answer time less the model; RSS per room =\n' +
      '  (settled RSS after the run - settled RSS after a warm-up turn in one room, before the history) / rooms,\n' +
      '  likewise the JS heap, three collections first, in a child process holding only the bridge and its platform\n' +
      '  (the fake model runs in the parent; small counts are within RSS noise); calls/msg = model calls, retries\n' +
      '  included, per message.\n' +
      '  Bare (the baseline): the same loop calling the fake model directly, nothing stored.',
  );
  return rows;
}

interface IdentitiesRow {
  readonly platform: 'discord' | 'slack';
  readonly results: IdentitiesResult[];
}

async function discordIdentities(): Promise<IdentitiesResult[]> {
  const most = Math.max(...IDENTITY_LEVELS);
  const fake = await startFakeDiscord({
    bots: Array.from({ length: most }, (_, i) => ({ token: `tok-${i}`, name: `agent${i}-bot` })),
    humans: [{ name: 'alice' }],
    channels: ['general'],
  });
  try {
    const results: IdentitiesResult[] = [];
    for (const count of IDENTITY_LEVELS) {
      const last = `chatter ${CHATTER - 1} (last)`;
      const job: ChildJob = {
        part: 'identities',
        platform: 'discord',
        identities: Array.from({ length: count }, (_, i) => ({ name: `agent${i}`, token: `tok-${i}` })),
        api: fake.apiURL,
        channel: fake.channel('general').id,
        last,
      };
      results.push(
        await runChild<IdentitiesResult>(job, async (stdin) => {
          for (let i = 0; i < CHATTER - 1; i += 1)
            fake.humanSays('general', 'alice', `chatter ${i} ${'x'.repeat(200)}`);
          fake.humanSays('general', 'alice', last);
          stdin.write('sent\n');
        }),
      );
    }
    return results;
  } finally {
    await fake.close();
  }
}

async function slackIdentities(): Promise<IdentitiesResult[]> {
  const results: IdentitiesResult[] = [];
  for (const count of IDENTITY_LEVELS) {
    const slack = await startFakeSlack();
    try {
      const alice = slack.addHuman('alice', 'Alice Smith');
      const apps = Array.from({ length: count }, (_, i) => slack.addApp(`agent${i}`));
      const channel = slack.addChannel('general', [alice, ...apps]);
      const last = `chatter ${CHATTER - 1} (last)`;
      const job: ChildJob = {
        part: 'identities',
        platform: 'slack',
        identities: apps.map((app) => ({ name: app.name, token: app.botToken, appToken: app.appToken })),
        api: slack.apiUrl,
        channel: channel.id,
        last,
      };
      results.push(
        await runChild<IdentitiesResult>(job, async (stdin) => {
          await slack.connected(...apps.map((app) => app.name));
          for (let i = 0; i < CHATTER - 1; i += 1) slack.say(alice, channel, `chatter ${i} ${'x'.repeat(200)}`);
          slack.say(alice, channel, last);
          stdin.write('sent\n');
        }),
      );
    } finally {
      await slack.close();
    }
  }
  return results;
}

async function identities(): Promise<IdentitiesRow[]> {
  const rows: IdentitiesRow[] = [
    { platform: 'discord', results: await discordIdentities() },
    { platform: 'slack', results: await slackIdentities() },
  ];
  console.log(
    `Identities: one bridge, one \`mention\` agent per identity, each its own Discord bot / Slack app on the fakes;`,
  );
  console.log(`  ${CHATTER} human messages every identity receives, then memory once they are stored`);
  console.log('  platform | identities | connect all | RSS (growth over start) | per extra identity: RSS, heap');
  for (const { platform, results } of rows) {
    const one = results.find((r) => r.count === 1);
    for (const r of results) {
      const per = (bytes: (m: IdentitiesResult['after']) => number) =>
        one ? `${(mb(bytes(r.after) - bytes(one.after)) / (r.count - 1)).toFixed(2)} MB` : '';
      const extra = r.count > 1 ? `${per((m) => m.rss)}, ${per((m) => m.heap)}` : '-';
      console.log(
        `  ${platform.padEnd(8)} | ${String(r.count).padStart(10)} | ${`${Math.round(r.connectMs)} ms`.padStart(11)} | ` +
          `${`${mb(r.after.rss).toFixed(0)} MB (+${mb(r.after.rss - r.before.rss).toFixed(0)} MB)`.padEnd(23)} | ${extra}`,
      );
    }
  }
  console.log(
    '  how: connect = bridge.start() (every identity logs in at once and is ready); RSS settled after three\n' +
      '  collections, in a child process holding only the bridge (the fakes run in the parent); per extra identity =\n' +
      '  (RSS with N - RSS with 1) / (N - 1), the level with 1 identity the baseline of the same run.',
  );
  return rows;
}

interface SandboxRow {
  readonly count: number;
  readonly startAllMs: number;
  readonly startP50: number;
  readonly startMax: number;
  readonly commandP50: number;
  readonly commandMax: number;
  readonly memoryMb: number;
  readonly failed: number;
}

/** Memory a container uses as `docker stats` counts it: usage less the inactive file cache. */
function containerMemory(stats: Dockerode.ContainerStats): number {
  const memory = stats.memory_stats as { usage?: number; stats?: Record<string, number> };
  const cache = memory.stats?.inactive_file ?? memory.stats?.total_inactive_file ?? memory.stats?.cache ?? 0;
  return Math.max(0, (memory.usage ?? 0) - cache);
}

/** Whether the engine answers and the image is there; a line saying why not (CI=true: it throws). */
async function dockerMissing(image: Record<string, string | undefined>): Promise<string | undefined> {
  const results = await checkDocker(readSettings(image));
  const problem = results.find((r) => !r.ok && (r.item === 'Docker engine' || r.item.startsWith('sandbox image')));
  if (!problem) return undefined;
  const line = problem.item === 'Docker engine' ? problem.detail : `${problem.item} ${problem.detail}`;
  if (isCi(process.env.CI)) throw new Error(`sandboxes: ${line}; CI=true makes them required`);
  return line;
}

async function sandboxes(): Promise<SandboxRow[] | undefined> {
  const image = { SANDBOX_IMAGE: process.env.SANDBOX_IMAGE };
  const missing = await dockerMissing(image);
  if (missing) {
    console.log(`Sandboxes: not measured: ${missing} (they need a Docker engine and the sandbox image)`);
    return undefined;
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rt-limits-sandbox-'));
  const docker = new Dockerode();
  const settings = readSettings({ ...image, DATA_DIR: dataDir, SANDBOX_IDLE_MINUTES: '0' });
  const sandbox = createDockerSandbox({ settings, logger: silentLogger(), docker });
  const options = { timeoutMs: 60_000 };
  const timed = async (key: string, command: string) => {
    const started = performance.now();
    const result = await sandbox.exec(key, command, options);
    return { ms: performance.now() - started, ok: result.exitCode === 0 && !result.timedOut };
  };
  const rows: SandboxRow[] = [];
  try {
    for (const count of SANDBOX_LEVELS) {
      const keys = Array.from({ length: count }, (_, i) => `console:limits-${count}-${i}`);
      try {
        const started = performance.now();
        const starts = await Promise.all(keys.map((key) => timed(key, 'true')));
        const startAllMs = performance.now() - started;
        const commands: Array<{ ms: number; ok: boolean }> = [];
        for (let round = 0; round < SANDBOX_ROUNDS; round += 1) {
          commands.push(...(await Promise.all(keys.map((key) => timed(key, 'echo "$HOSTNAME" && ls /workspace')))));
        }
        const containers = await docker.listContainers({ filters: { label: [`roundtable.scope=${dataDir}`] } });
        const memory = await Promise.all(
          containers.map(async (info) => containerMemory(await docker.getContainer(info.Id).stats({ stream: false }))),
        );
        rows.push({
          count,
          startAllMs,
          startP50: percentile(
            starts.map((s) => s.ms),
            0.5,
          ),
          startMax: Math.max(...starts.map((s) => s.ms)),
          commandP50: percentile(
            commands.map((c) => c.ms),
            0.5,
          ),
          commandMax: Math.max(...commands.map((c) => c.ms)),
          memoryMb: mb(memory.reduce((sum, m) => sum + m, 0) / Math.max(1, memory.length)),
          failed: [...starts, ...commands].filter((r) => !r.ok).length + (count - containers.length),
        });
      } finally {
        await Promise.all(keys.map((key) => sandbox.reset?.(key, { wipeWorkspace: true }).catch(() => undefined)));
      }
    }
  } finally {
    await sandbox.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(
    `Sandboxes: room sandboxes through the Docker sandbox (image ${settings.SANDBOX_IMAGE}, SANDBOX_MEMORY ${settings.SANDBOX_MEMORY}, SANDBOX_CPUS ${settings.SANDBOX_CPUS})`,
  );
  console.log(
    '  sandboxes | all started in | start p50 / max     | command p50 / max  | memory per container | failed',
  );
  for (const r of rows) {
    console.log(
      `  ${String(r.count).padStart(9)} | ${`${(r.startAllMs / 1000).toFixed(2)} s`.padStart(14)} | ` +
        `${`${Math.round(r.startP50)} / ${Math.round(r.startMax)} ms`.padEnd(18)} | ` +
        `${`${r.commandP50.toFixed(1)} / ${r.commandMax.toFixed(1)} ms`.padEnd(18)} | ${`${r.memoryMb.toFixed(1)} MB`.padStart(20)} | ${r.failed}`,
    );
  }
  console.log(
    '  how: start = the first sandbox.exec(`true`) of every room at once (container created and started, workspace\n' +
      `  made, the command run); command = \`echo $HOSTNAME && ls /workspace\` in every room at once, ${SANDBOX_ROUNDS} rounds;\n` +
      "  memory = the engine's one-shot stats per container (usage less inactive file cache, as docker stats shows it),\n" +
      '  averaged. The row with 1 sandbox is the baseline of the same run.',
  );
  return rows;
}

async function main(): Promise<void> {
  const roomRows = await rooms();
  const comfortable = roomRows.filter((r) => percentile(r.bridge.added, 0.99) < COMFORTABLE_P99_MS).map((r) => r.rooms);
  const exact = roomRows.every((r) => r.bridge.lost === 0 && r.bridge.doubled === 0 && r.bridge.errors === 0);
  const ceiling = Math.max(...roomRows.map((r) => r.bridge.answered / r.bridge.windowS));
  reportGoal({
    figure:
      `rooms: at most ${ceiling.toFixed(0)} messages/s; added p99 under ${COMFORTABLE_P99_MS} ms at ` +
      `${comfortable.length > 0 ? `${comfortable.join(', ')} rooms` : 'no level'}; every message answered exactly once: ${exact ? 'yes' : 'no'}`,
    goal: 'every message answered exactly once, at every level',
    met: exact,
    how: `${ROOM_LEVELS.join(', ')} rooms asking one question after another for ${WINDOW_S} s each, a ${MODEL_MS} ms model, one bridge on SQLite`,
  });
  // The shell's goals: beside the bare model client at the same concurrency, in this run.
  for (const { rooms: n, bridge, bare } of roomRows) {
    const goal = SHELL_GOALS.get(n);
    if (!goal) continue;
    const ratio = bridge.answered / bridge.windowS / (bare.answered / bare.windowS);
    const p50 = percentile(bridge.added, 0.5);
    const cpu = (r: RoomsResult) => (r.cpuMs / Math.max(1, r.answered)).toFixed(2);
    reportGoal({
      figure: `rooms ${n}: ${ratio.toFixed(2)}x the bare client's messages/s, added p50 ${p50.toFixed(0)} ms (bare ${percentile(bare.added, 0.5).toFixed(0)} ms)`,
      goal: `>= ${goal.ratio}x and <= ${goal.p50} ms`,
      met: ratio >= goal.ratio && p50 <= goal.p50,
      how: `the same ${n} rooms asking for ${WINDOW_S} s, bridge then bare client, each in its child process; CPU per answered message in the child: bridge ${cpu(bridge)} ms, bare ${cpu(bare)} ms`,
    });
  }
  console.log('');
  const identityRows = await identities();
  const most = Math.max(...IDENTITY_LEVELS);
  const connect = identityRows.map((row) => ({
    platform: row.platform,
    ms: row.results.find((r) => r.count === most)?.connectMs ?? Number.NaN,
  }));
  reportGoal({
    figure: `identities: ${most} connected in ${connect.map((c) => `${(c.ms / 1000).toFixed(1)} s (${c.platform})`).join(', ')}`,
    goal: '< 30 s each',
    met: connect.every((c) => c.ms < 30_000),
    how: `bridge.start() with ${most} agents, each its own bot or app, on the fakes, in a child process`,
  });
  console.log('');
  const sandboxRows = await sandboxes();
  if (sandboxRows) {
    const top = sandboxRows.at(-1);
    reportGoal({
      figure: `sandboxes: ${top?.count} started at once in ${((top?.startAllMs ?? 0) / 1000).toFixed(1)} s, a command in all at once p50 ${top?.commandP50.toFixed(0)} ms, ${top?.memoryMb.toFixed(1)} MB each, ${top?.failed} failed`,
      goal: 'none failed',
      met: sandboxRows.every((r) => r.failed === 0),
      how: `${SANDBOX_LEVELS.join(', ')} room sandboxes through createDockerSandbox, started at once, then ${SANDBOX_ROUNDS} rounds of a command in all`,
    });
  }
}

await main();
