/**
 * Discord benchmark, everything on 127.0.0.1 against the fake Discord:
 *  - latency from the fake emitting MESSAGE_CREATE to the reply's POST arriving, p50/p99 over 500 messages,
 *    for the bridge (Discord adapter → store → router → fake LLM answering at once → post through the agent's bot)
 *    beside a bare discord.js bot that replies directly, measured in the same run;
 *  - resident memory per extra bot identity (a Client built like the adapter's, connected to the fake).
 * Goal: the bridge adds under 1 ms at p50 over the bare bot that also asks the fake LLM (the same hops but ours).
 *   npm run bench:discord [-- --smoke]   (or npm run bench -- discord); memory is measured in child processes after
 *   collection
 * Both bots use the same raised REST global limit: discord.js's 50 requests/s would pace the loop, not the code.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { trace } from '@opentelemetry/api';
import { type Client, Events } from 'discord.js';
import OpenAI from 'openai';
import { createClient } from '../adapters/discord/client.js';
import { createDiscordAdapter } from '../adapters/discord/index.js';
import { createBridge } from '../src/bridge/index.js';
import { silentLogger } from '../src/log.js';
import { openStore } from '../src/store/index.js';
import { startTracing } from '../src/trace/setup.js';
import { setTracing } from '../src/trace/switch.js';
import { type FakeDiscord, type FakeMessage, startFakeDiscord } from '../test/fakes/discord/index.js';
import { FakeSandbox } from '../test/fakes/fake-sandbox.js';
import { startFakeOpenAI } from '../test/fakes/openai-server/index.js';
import { testConfig } from '../test/helpers/config.js';
import { reportGoal } from './lib/goals.js';
import { sized } from './lib/mode.js';
import { startOtlpSink } from './lib/otlp-sink.js';
import { traceStepsCost } from './lib/trace-steps.js';

const MESSAGES = sized(Number(process.env.BENCH_MESSAGES ?? 500), 20);
const WARM_UP = sized(50, 5);
const EXTRA_IDENTITIES = sized(40, 4);
/** Messages every identity of a memory child receives before its memory is read. */
const TRAFFIC = sized(200, 20);
const REST = { globalRequestsPerSecond: 1_000_000 };

/** The process's CPU time (user + system, ms) spent by each measured run, by its label. */
const cpu = new Map<string, number>();

/** Sends `count` human messages one after another; each waits for the bot message that carries its tag. */
async function measure(fake: FakeDiscord, label: string, count: number): Promise<number[]> {
  const samples: number[] = [];
  const started = process.cpuUsage();
  let waiting: { tag: string; sentAt: number; done: (ms: number) => void } | undefined;
  const off = fake.onMessage((message: FakeMessage) => {
    if (waiting && message.authorId !== fake.human('alice').id && message.content.includes(waiting.tag)) {
      waiting.done(performance.now() - waiting.sentAt);
    }
  });
  for (let i = 0; i < count; i += 1) {
    const tag = `${label}-${i}-end`;
    const elapsed = new Promise<number>((resolve) => {
      waiting = { tag, sentAt: performance.now(), done: resolve };
    });
    fake.humanSays('general', 'alice', `question ${tag}`);
    samples.push(await elapsed);
  }
  off();
  const used = process.cpuUsage(started);
  cpu.set(label, (used.user + used.system) / 1000);
  return samples;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))] ?? Number.NaN;
}

function report(label: string, samples: readonly number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 0.5);
  const p99 = percentile(sorted, 0.99);
  console.log(`  ${label.padEnd(48)} p50 ${p50.toFixed(2).padStart(7)} ms   p99 ${p99.toFixed(2).padStart(7)} ms`);
  return { p50, p99 };
}

async function login(client: Client, token: string): Promise<void> {
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(token);
  await ready;
}

async function bareBot(fake: FakeDiscord): Promise<number[]> {
  const client = createClient({ api: fake.apiURL, rest: REST });
  client.on(Events.MessageCreate, (message) => {
    if (message.author.bot || !message.channel.isSendable()) return;
    void message.channel.send(`re: ${message.content}`);
  });
  await login(client, 'tok-bare');
  await measure(fake, 'bare-warm', WARM_UP);
  const samples = await measure(fake, 'bare', MESSAGES);
  await client.destroy();
  return samples;
}

/** The bare bot again, but asking the fake LLM first: how much of the bridge's time is the LLM hop itself. */
async function bareBotWithLlm(fake: FakeDiscord): Promise<number[]> {
  const llm = await startFakeOpenAI();
  llm.respond((request) => ({ content: `re: ${String(request.messages.at(-1)?.content)}` }));
  const openai = new OpenAI({ baseURL: llm.baseURL, apiKey: 'bench' });
  const client = createClient({ api: fake.apiURL, rest: REST });
  client.on(Events.MessageCreate, (message) => {
    if (message.author.bot || !message.channel.isSendable()) return;
    const channel = message.channel;
    void openai.chat.completions
      .create({ model: 'bare', messages: [{ role: 'user', content: message.content }] })
      .then(async (completion) => {
        await channel.send(completion.choices[0]?.message.content ?? '?');
      });
  });
  await login(client, 'tok-bare');
  try {
    await measure(fake, 'llm-warm', WARM_UP);
    return await measure(fake, 'llm', MESSAGES);
  } finally {
    await client.destroy();
    await llm.close();
  }
}

async function bridged(fake: FakeDiscord, label = 'bridge'): Promise<number[]> {
  return onBridge(fake, async () => {
    await measure(fake, `${label}-warm`, WARM_UP);
    return measure(fake, label, MESSAGES);
  });
}

/** Runs `run` against a bridge (the fake LLM answering at once, a store of its own), stopped after it. */
async function onBridge<T>(fake: FakeDiscord, run: () => Promise<T>): Promise<T> {
  const llm = await startFakeOpenAI();
  // Answers the newest question in the context (a question may be stored before the previous reply is).
  llm.respond((request) => {
    const asked = request.messages.filter((message) => message.role === 'user').map((m) => String(m.content));
    const tags = asked.join('\n').match(/\S+-end/g) ?? ['?'];
    return { content: `re: ${tags.at(-1)}` };
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-bench-discord-'));
  const store = openStore(path.join(dir, 'bench.db'));
  const config = testConfig({
    agents: [
      { name: 'data', activation: 'always', discord: { token: 'tok-data', control: true } },
      { name: 'code', activation: 'mention', discord: { token: 'tok-code', control: false } },
      { name: 'reviewer', activation: 'mention', discord: { token: 'tok-reviewer', control: false } },
    ],
    env: { OPENAI_BASE_URL: llm.baseURL, DISCORD_API_URL: fake.apiURL, HISTORY_LIMIT: '20' },
  });
  const adapter = createDiscordAdapter({ config, logger: silentLogger(), rest: REST });
  const bridge = createBridge({
    config,
    store,
    sandbox: new FakeSandbox(),
    adapters: [adapter],
    logger: silentLogger(),
  });
  await bridge.start();
  try {
    return await run();
  } finally {
    await bridge.stop();
    await store.close();
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function settledMemory(): Promise<{ rss: number; heap: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i += 1) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed };
}

/**
 * Child mode: connects `count` identities built like the adapter's to the parent's fake, waits until the first
 * has seen `traffic` messages (every identity receives them all), then prints its settled memory as JSON.
 */
async function childIdentities(api: string, count: number, traffic: number): Promise<void> {
  const clients: Client[] = [];
  let seen = 0;
  let done: () => void = () => {};
  const enough = new Promise<void>((resolve) => {
    done = resolve;
  });
  for (let i = 0; i < count; i += 1) {
    const client = createClient({ api, rest: REST });
    if (i === 0) {
      client.on(Events.MessageCreate, () => {
        seen += 1;
        if (seen >= traffic) done();
      });
    }
    await login(client, `tok-extra-${i}`);
    clients.push(client);
  }
  console.log('READY');
  await enough;
  console.log(JSON.stringify(await settledMemory()));
  await Promise.all(clients.map((client) => client.destroy()));
}

/** Memory of a process holding `count` identities, measured in a child so the fake and the bridge do not count. */
async function memoryOf(fake: FakeDiscord, count: number): Promise<{ rss: number; heap: number }> {
  const traffic = TRAFFIC;
  const child = spawn(process.execPath, [...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_CHILD: JSON.stringify({ api: fake.apiURL, count, traffic }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  let chattered = false;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    output += chunk;
    if (!chattered && output.includes('READY')) {
      chattered = true;
      for (let i = 0; i < traffic; i += 1) fake.humanSays('general', 'alice', `chatter ${i} ${'x'.repeat(200)}`);
    }
  });
  await once(child, 'exit');
  const line = output.split('\n').find((candidate) => candidate.startsWith('{'));
  if (!line) throw new Error(`memory child printed no figures: ${output}`);
  return JSON.parse(line) as { rss: number; heap: number };
}

async function memoryPerIdentity(fake: FakeDiscord): Promise<void> {
  const one = await memoryOf(fake, 1);
  const many = await memoryOf(fake, 1 + EXTRA_IDENTITIES);
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);
  console.log(
    `Memory per extra bot identity (child processes with 1 and ${1 + EXTRA_IDENTITIES} identities, after ${TRAFFIC} messages):`,
  );
  console.log(`  1 identity: resident ${mb(one.rss)} MB, JS heap ${mb(one.heap)} MB`);
  console.log(`  ${1 + EXTRA_IDENTITIES} identities: resident ${mb(many.rss)} MB, JS heap ${mb(many.heap)} MB`);
  console.log(
    `  per extra identity: resident ${mb((many.rss - one.rss) / EXTRA_IDENTITIES)} MB, JS heap ${mb((many.heap - one.heap) / EXTRA_IDENTITIES)} MB`,
  );
}

/** The bridge again, with every message traced and exported over OTLP/HTTP (batched) to a local receiver. */
async function tracedBridge(fake: FakeDiscord): Promise<number[]> {
  const sink = await startOtlpSink();
  const tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }, { content: false, log: silentLogger() });
  try {
    return await bridged(fake, 'traced');
  } finally {
    await tracing.shutdown();
    trace.disable();
    // startTracing handed the endpoint to the SDK through the environment: the next run's receiver is another.
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    console.log(`  (the receiver took ${sink.exports()} exports)`);
    await sink.close();
  }
}

/** Blocks of messages, traced and untraced by turns (ABBA: on, off, off, on, …), on one bridge. */
const BLOCKS = sized(12, 4);
/** Messages per round of the tracing steps measured alone. */
const STEPS = sized(3000, 100);

/**
 * One bridge exporting to a local receiver, tracing switched on and off between blocks of messages (the switch every
 * tracing step checks first: off, the bridge does what it does with no endpoint). A burst of load elsewhere on the
 * machine falls on both alike, which two runs one after the other cannot promise.
 */
async function alternating(fake: FakeDiscord): Promise<{ on: number[]; off: number[]; cpuOn: number; cpuOff: number }> {
  const sink = await startOtlpSink();
  const tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }, { content: false, log: silentLogger() });
  const size = Math.max(1, Math.round((2 * MESSAGES) / BLOCKS));
  const result = { on: [] as number[], off: [] as number[], cpuOn: 0, cpuOff: 0 };
  try {
    await onBridge(fake, async () => {
      await measure(fake, 'alternating-warm', WARM_UP);
      for (let block = 0; block < BLOCKS; block += 1) {
        const on = block % 4 === 0 || block % 4 === 3;
        setTracing(on);
        const label = `alternating-${block}`;
        (on ? result.on : result.off).push(...(await measure(fake, label, size)));
        if (on) result.cpuOn += cpu.get(label) ?? 0;
        else result.cpuOff += cpu.get(label) ?? 0;
      }
    });
    // The same steps alone, with no bridge around them: what they cost once the code is warm.
    const alone = await traceStepsCost(STEPS, 3);
    console.log(
      `  the route's tracing steps alone (root, decision, commit, turn, post; exported), ${STEPS} messages × 3 ` +
        `rounds: ${alone.on.toFixed(1)} µs CPU per message on, ${alone.off.toFixed(1)} µs off`,
    );
  } finally {
    await tracing.shutdown();
    trace.disable();
    // startTracing handed the endpoint to the SDK through the environment: the next run's receiver is another.
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    console.log(`  (the receiver took ${sink.exports()} exports)`);
    await sink.close();
  }
  return result;
}

async function main(): Promise<void> {
  const fake = await startFakeDiscord({
    bots: [
      { token: 'tok-data', name: 'data-bot' },
      { token: 'tok-code', name: 'code-bot' },
      { token: 'tok-reviewer', name: 'reviewer-bot' },
      { token: 'tok-bare', name: 'bare-bot' },
      ...Array.from({ length: EXTRA_IDENTITIES + 1 }, (_, i) => ({ token: `tok-extra-${i}`, name: `extra-${i}` })),
    ],
    humans: [{ name: 'alice' }],
  });
  try {
    console.log(`Discord: MESSAGE_CREATE emitted → reply POST received, ${MESSAGES} messages one at a time`);
    const bare = report('baseline: bare discord.js bot replying', await bareBot(fake));
    const withLlm = report('baseline: bare bot asking the fake LLM first', await bareBotWithLlm(fake));
    const bridge = report('bridge: adapter + store + router + fake LLM', await bridged(fake));
    console.log(
      `  over the bare bot replying directly the bridge adds ${(bridge.p50 - bare.p50).toFixed(2)} ms at p50 and ` +
        `${(bridge.p99 - bare.p99).toFixed(2)} ms at p99; ratio p50 ${(bridge.p50 / bare.p50).toFixed(2)}`,
    );
    // Tracing on, then off again: the traced run is compared with the mean of the untraced runs around it.
    const traced = report('bridge traced: spans exported to a local OTLP/HTTP receiver', await tracedBridge(fake));
    const again = report('bridge untraced again', await bridged(fake, 'bridge-again'));
    const untraced = (bridge.p50 + again.p50) / 2;
    const sandwiched = traced.p50 - untraced;
    console.log(`  traced against the mean of the untraced runs around it: ${sandwiched.toFixed(2)} ms at p50`);
    const alternated = await alternating(fake);
    const on = report('bridge, tracing on by turns (blocks of one bridge)', alternated.on);
    const off = report('bridge, tracing off by turns', alternated.off);
    const tracingAdds = on.p50 - off.p50;
    const cpuAdds = ((alternated.cpuOn - alternated.cpuOff) * 1000) / alternated.on.length;
    const added = bridge.p50 - withLlm.p50;
    reportGoal({
      figure: `discord: the bridge adds ${added.toFixed(2)} ms at p50 over a bare discord.js bot that also asks the fake LLM`,
      goal: '< 1 ms',
      met: added < 1,
      how: `MESSAGE_CREATE emitted by the fake -> reply POST received, ${MESSAGES} messages one at a time after ${WARM_UP} warm-up, the three bots one after another in this run`,
    });
    reportGoal({
      figure: `discord: tracing with export adds ${tracingAdds.toFixed(2)} ms at p50 over the bridge untraced`,
      goal: '< 0.5 ms',
      met: tracingAdds < 0.5,
      how: `one bridge exporting to a receiver in another process (batched OTLP/HTTP JSON), tracing switched on and off in ${BLOCKS} alternating blocks (on, off, off, on, …) of ${alternated.on.length / (BLOCKS / 2)} messages: p50 on against p50 off; CPU ${cpuAdds.toFixed(0)} µs more per message on`,
    });
    // CPU time is what the work costs whatever else the machine does (wall-clock latency is not, on a busy one).
    const perMessage = (label: string) => ((cpu.get(label) ?? Number.NaN) * 1000) / MESSAGES;
    const [bareCpu, llmCpu, bridgeCpu] = [perMessage('bare'), perMessage('llm'), perMessage('bridge')];
    const [tracedCpu, againCpu] = [perMessage('traced'), perMessage('bridge-again')];
    console.log(
      `  CPU per message (this process: the fakes, the bot and its client): bare bot ${bareCpu.toFixed(0)} µs, ` +
        `bare bot asking the LLM ${llmCpu.toFixed(0)} µs, bridge ${bridgeCpu.toFixed(0)} µs: the bridge's own ` +
        `${(bridgeCpu - llmCpu).toFixed(0)} µs (ratio ${(bridgeCpu / llmCpu).toFixed(2)})`,
    );
    console.log(
      `  CPU per message with tracing: traced ${tracedCpu.toFixed(0)} µs against ${((bridgeCpu + againCpu) / 2).toFixed(0)} µs ` +
        `untraced (the mean of the runs before and after): ${(tracedCpu - (bridgeCpu + againCpu) / 2).toFixed(0)} µs per message`,
    );
    console.log('');
    await memoryPerIdentity(fake);
  } finally {
    await fake.close();
  }
}

const child = process.env.BENCH_CHILD;
if (child) {
  const { api, count, traffic } = JSON.parse(child) as { api: string; count: number; traffic: number };
  await childIdentities(api, count, traffic);
} else {
  await main();
}
