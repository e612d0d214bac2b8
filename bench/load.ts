/**
 * Load: 50 rooms × 4 agents, model latency 200 ms, two bursts of 1,000 human messages in 10 s — into one room,
 * then spread over all 50 — through the real bridge (file store, outbox and journal) and an in-memory platform.
 * Prints messages lost, per-room order, model calls per human message, the added latency (from a message to the
 * room's next answer, less the model's 200 ms) at p50 and p99, and resident memory; beside a baseline measured in
 * the same run: the same load answered naively, one model call per message, nothing stored. Then the time `/pass`
 * takes to stop a turn waiting out a model server's Retry-After, and the time a bridge process takes to exit on
 * SIGTERM during such a wait. Goals: no message lost and each room's order kept, in both bursts; `/pass` frees the
 * room and SIGTERM ends the process within 1 s, not after the 30 s wait. A smoke run sends 100 messages in 1 s
 * over 10 rooms instead.
 *   npm run bench -- load [--smoke]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBridge } from '../src/bridge/index.js';
import { silentLogger } from '../src/log.js';
import { openStore } from '../src/store/index.js';
import { startFakeDiscord } from '../test/fakes/discord/index.js';
import { FakeSandbox } from '../test/fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test/fakes/openai-server/index.js';
import { testConfig } from '../test/helpers/config.js';
import { MemoryPlatform, PlatformConnection } from '../test/helpers/crash-harness.js';
import { reportGoal } from './lib/goals.js';
import { sized } from './lib/mode.js';

const ROOMS = sized(50, 10);
const AGENTS = ['ana', 'ben', 'cy', 'dee'];
const BURST = sized(1000, 100);
const BURST_MS = sized(10_000, 1_000);
const MODEL_MS = 200;

interface Figures {
  readonly sent: number;
  readonly stored: number;
  readonly orderKept: boolean;
  readonly modelCalls: number;
  readonly p50: number;
  readonly p99: number;
  readonly rssMb: number;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Samples resident memory while `work` runs; resolves with its result and how far RSS grew over it, in MB. */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ result: T; rssMb: number }> {
  const start = process.memoryUsage().rss;
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  try {
    const result = await work();
    return { result, rssMb: Math.round((Math.max(peak, process.memoryUsage().rss) - start) / 1024 / 1024) };
  } finally {
    clearInterval(timer);
  }
}

/** The burst's messages: `[room, text]`, each addressing one agent in turn. */
function burst(spread: boolean): Array<[string, string]> {
  return Array.from({ length: BURST }, (_, i) => [
    spread ? `room${i % ROOMS}` : 'room0',
    `@${AGENTS[i % AGENTS.length]} message ${i}`,
  ]);
}

/** The number of a burst message in a text (`message 12`), or -1. */
const numberIn = (text: string) => Number(/message (\d+)/.exec(text)?.[1] ?? -1);

/**
 * From each human message to the first answer in its room that saw it (the model answers the newest message it
 * is shown, so a reply to message N covers every message up to N there), less the model's latency (ms).
 */
function addedLatency(
  sent: Array<{ room: string; n: number; at: number }>,
  answers: Map<string, Array<[number, number]>>,
) {
  const latencies: number[] = [];
  for (const { room, n, at } of sent) {
    const covering = (answers.get(room) ?? []).find(([answered]) => answered >= n);
    if (covering) latencies.push(Math.max(0, covering[1] - at - MODEL_MS));
  }
  return latencies;
}

async function bridgeRun(llm: FakeOpenAI, spread: boolean): Promise<Figures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-load-'));
  const config = testConfig({
    agents: AGENTS.map((name) => ({ name, activation: 'mention' as const })),
    env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', LLM_TIMEOUT_S: '30' },
  });
  const store = openStore(path.join(dir, 'rt.db'));
  const platform = new MemoryPlatform();
  const bridge = createBridge({
    config,
    store,
    sandbox: new FakeSandbox(),
    adapters: [new PlatformConnection(platform)],
    logger: silentLogger(),
  });
  await bridge.start();
  const calls = llm.requests.length;
  const sent: Array<{ room: string; n: number; at: number }> = [];
  const answers = new Map<string, Array<[number, number]>>();
  platform.onPost = (message) => {
    if (!message.agent) return;
    answers.set(message.channel, [
      ...(answers.get(message.channel) ?? []),
      [numberIn(message.text), performance.now()],
    ]);
  };
  const { result, rssMb } = await withPeakRss(async () => {
    const messages = burst(spread);
    const started = performance.now();
    for (const [i, [room, text]] of messages.entries()) {
      const due = started + (i * BURST_MS) / BURST;
      if (due > performance.now()) await sleep(due - performance.now());
      sent.push({ room, n: numberIn(text), at: performance.now() });
      await platform.say(text, { channel: room });
    }
    // Answers are timed as they are posted (the platform keeps them in order).
    await bridge.idle();
    return messages;
  });
  void result;
  let stored = 0;
  let orderKept = true;
  for (let r = 0; r < ROOMS; r++) {
    const room = `room${r}`;
    const expected = platform.messages.filter((m) => m.channel === room && m.agent === undefined).map((m) => m.text);
    if (expected.length === 0) continue;
    const record = await store.rooms.open('test', room);
    const got = (await store.rooms.history(record.id, BURST * 2))
      .filter((m) => m.kind === 'human')
      .map((m) => m.content);
    stored += got.length;
    if (got.join('\n') !== expected.join('\n')) orderKept = false;
  }
  const latencies = addedLatency(sent, answers);
  await bridge.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    sent: BURST,
    stored,
    orderKept,
    modelCalls: llm.requests.length - calls,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    rssMb,
  };
}

/** The baseline: every message answered on its own, at once (one model call each), nothing stored, no order kept. */
async function naiveRun(llm: FakeOpenAI, spread: boolean): Promise<Figures> {
  const calls = llm.requests.length;
  const latencies: number[] = [];
  const { rssMb } = await withPeakRss(async () => {
    const pending: Promise<void>[] = [];
    const started = performance.now();
    for (const [i, [, text]] of burst(spread).entries()) {
      const due = started + (i * BURST_MS) / BURST;
      if (due > performance.now()) await sleep(due - performance.now());
      const at = performance.now();
      pending.push(
        fetch(`${llm.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
          body: JSON.stringify({ model: 'naive', messages: [{ role: 'user', content: text }] }),
        })
          .then((response) => response.json())
          .then(() => {
            latencies.push(Math.max(0, performance.now() - at - MODEL_MS));
          }),
      );
    }
    await Promise.all(pending);
  });
  return {
    sent: BURST,
    stored: 0,
    orderKept: false,
    modelCalls: llm.requests.length - calls,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    rssMb,
  };
}

function report(label: string, bridge: Figures, naive: Figures): void {
  console.log(
    `${label}: ${BURST} human messages in ${BURST_MS / 1000} s, ${AGENTS.length} agents, model ${MODEL_MS} ms`,
  );
  const row = (name: string, f: Figures) =>
    console.log(
      `  ${name.padEnd(34)} lost ${String(f.sent - f.stored).padStart(4)}  order ${f.orderKept ? 'kept' : '  - '}  ` +
        `model calls/message ${(f.modelCalls / f.sent).toFixed(3)}  added latency p50 ${Math.round(f.p50)} ms  p99 ` +
        `${Math.round(f.p99)} ms  RSS growth ${f.rssMb} MB`,
    );
  row('bridge (stored, journaled)', bridge);
  row('baseline: one call per message', { ...naive, stored: naive.sent });
  console.log(
    `  ratio bridge/baseline: model calls ${(bridge.modelCalls / Math.max(1, naive.modelCalls)).toFixed(3)}, ` +
      `p99 added latency ${(bridge.p99 / Math.max(1, naive.p99)).toFixed(1)}×`,
  );
  const lost = bridge.sent - bridge.stored;
  reportGoal({
    figure: `load, ${label.toLowerCase()}: ${lost} of ${bridge.sent} messages lost, order ${bridge.orderKept ? 'kept' : 'NOT kept'}`,
    goal: 'none lost, order kept',
    met: lost === 0 && bridge.orderKept,
    how: "each room's human messages read back from the store after the burst, compared with what the platform sent",
  });
  console.log('');
}

/** `/pass` while a turn waits out a 30 s Retry-After: how long until the room is free again. */
async function passDuringWait(llm: FakeOpenAI): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-load-'));
  const config = testConfig({
    agents: [{ name: 'ana' }],
    env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '3', LLM_TIMEOUT_S: '120' },
  });
  const store = openStore(path.join(dir, 'rt.db'));
  const platform = new MemoryPlatform();
  const connection = new PlatformConnection(platform);
  const bridge = createBridge({
    config,
    store,
    sandbox: new FakeSandbox(),
    adapters: [connection],
    logger: silentLogger(),
  });
  await bridge.start();
  const before = llm.requests.length;
  await platform.say('@ana are you there?');
  while (llm.requests.length === before) await sleep(5);
  await sleep(100); // the client is now waiting out the Retry-After
  const started = performance.now();
  await bridge.sink.command({
    platform: 'test',
    channel: 'room',
    name: 'pass',
    args: '',
    user: { id: 'op', name: 'op' },
    isOperator: true,
  });
  await bridge.idle();
  const ms = performance.now() - started;
  await bridge.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

/** SIGTERM to a bridge process while its turn waits out a 30 s Retry-After: how long until it exits. */
async function sigtermDuringWait(llm: FakeOpenAI): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-load-'));
  const discord = await startFakeDiscord({ bots: [{ token: 'tok-ana', name: 'ana-bot' }], channels: ['general'] });
  const agents = path.join(dir, 'agents');
  mkdirSync(agents);
  writeFileSync(
    path.join(agents, 'ana.md'),
    '---\nname: ana\nmodel: fake\nactivation: mention\ntools: []\ndiscord: { token_env: DISCORD_TOKEN_ANA }\n---\nHi.\n',
  );
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, '../test/reliability/kill-child.ts')],
    {
      env: {
        PATH: process.env.PATH ?? '',
        ROUNDTABLE_CWD: dir,
        AGENTS_DIR: agents,
        DATA_DIR: path.join(dir, 'data'),
        LOG_FILE: path.join(dir, 'bridge.log'),
        OPENAI_BASE_URL: llm.baseURL,
        OPENAI_API_KEY: 'test-key',
        LLM_MAX_RETRIES: '3',
        LLM_TIMEOUT_S: '120',
        DISCORD_API_URL: discord.apiURL,
        DISCORD_TOKEN_ANA: 'tok-ana',
      },
      cwd: path.resolve(import.meta.dirname, '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve) => child.stdout?.on('data', (data: Buffer) => data.includes('ready') && resolve()));
  const before = llm.requests.length;
  discord.humanSays('general', 'alice', `<@${discord.bot('ana-bot').id}> are you there?`);
  while (llm.requests.length === before) await sleep(5);
  await sleep(100);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const started = performance.now();
  child.kill('SIGTERM');
  await exited;
  const ms = performance.now() - started;
  await discord.close();
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

async function main(): Promise<void> {
  const llm = await startFakeOpenAI();
  // The agents answer the newest message they are shown, after 200 ms; "are you there?" meets a 30 s Retry-After.
  llm.respond((request) => {
    const lines = request.messages.map((m) => String(m.content));
    if (lines.some((line) => line.includes('are you there?'))) return { status: 429, retryAfter: 30 };
    const newest = Math.max(-1, ...lines.filter((line) => !line.includes('re: message')).map(numberIn));
    return { content: `re: message ${newest}`, delayMs: MODEL_MS };
  });
  try {
    report('Burst into one room', await bridgeRun(llm, false), await naiveRun(llm, false));
    report(`Burst spread over ${ROOMS} rooms`, await bridgeRun(llm, true), await naiveRun(llm, true));
    const pass = await passDuringWait(llm);
    reportGoal({
      figure: `load: /pass freed the room in ${Math.round(pass)} ms during a 30 s Retry-After wait`,
      goal: '< 1000 ms',
      met: pass < 1000,
      how: 'from the operator command to the bridge idle again, while the model client waits out a 429',
    });
    const term = await sigtermDuringWait(llm);
    reportGoal({
      figure: `load: the bridge process exited ${Math.round(term)} ms after SIGTERM during a 30 s Retry-After wait`,
      goal: '< 1000 ms',
      met: term < 1000,
      how: 'from SIGTERM to the exit of a bridge process (npm start without Docker) whose turn waits out a 429',
    });
  } finally {
    await llm.close();
  }
}

await main();
