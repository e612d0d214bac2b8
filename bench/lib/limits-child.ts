/**
 * The child processes of bench/limits.ts: each measures one level (a number of rooms, or of bot identities) in a
 * process of its own, so its resident memory is that level's alone (the fakes it talks to run in the parent), and
 * prints its figures as one JSON line. Started with --expose-gc and BENCH_CHILD holding a `ChildJob`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { createDiscordAdapter } from '../../adapters/discord/index.js';
import { SlackAdapter } from '../../adapters/slack/index.js';
import { createBridge } from '../../src/bridge/index.js';
import { silentLogger } from '../../src/log.js';
import type { Outbound, Posted } from '../../src/ports.js';
import { openStore, type StorePort } from '../../src/store/index.js';
import { FakeSandbox } from '../../test/fakes/fake-sandbox.js';
import { testConfig } from '../../test/helpers/config.js';
import { MemoryAdapter } from '../../test/helpers/memory-adapter.js';

export const MODEL_MS = 200;
/** How long a message may wait for its answer before it counts as lost. */
const ANSWER_TIMEOUT_MS = 60_000;

export type ChildJob =
  | {
      readonly part: 'rooms';
      readonly mode: 'bridge' | 'bare';
      readonly rooms: number;
      readonly seconds: number;
      readonly llm: string;
      /** Messages each room holds before the conversation (none asks the agent), so every turn reads a full window. */
      readonly history: number;
    }
  | {
      readonly part: 'identities';
      readonly platform: 'discord' | 'slack';
      /** Discord: `tok-<i>`; Slack: each app's tokens. */
      readonly identities: ReadonlyArray<{ readonly name: string; readonly token: string; readonly appToken?: string }>;
      readonly api: string;
      readonly channel: string;
      /** The text of the last message the parent sends once told READY; the child is done when it is stored. */
      readonly last: string;
    };

export interface Memory {
  readonly rss: number;
  readonly heap: number;
}

export interface RoomsResult {
  readonly rooms: number;
  /** The history put into the rooms before: how long it took to store, all rooms at once. */
  readonly fillMs: number;
  /** From every room's first question, sent at once, to the last of their answers. */
  readonly openMs: number;
  /** Answers in the measured window, over its length (the last answers waited for). */
  readonly answered: number;
  /** Every message sent, the warm-up and each room's first included. */
  readonly asked: number;
  readonly windowS: number;
  /** This process's CPU time (user and system) in the measured window: over the answers, its cost per message. */
  readonly cpuMs: number;
  /** Per answer: from the message to its answer, less the model's MODEL_MS. */
  readonly added: number[];
  readonly lost: number;
  readonly doubled: number;
  /** The bridge's own lines (an agent's failure) in the rooms. */
  readonly errors: number;
  /** The first few different lines among them. */
  readonly errorLines: string[];
  readonly before: Memory;
  readonly after: Memory;
}

export interface IdentitiesResult {
  readonly count: number;
  /** bridge.start(): every identity logged in and ready. */
  readonly connectMs: number;
  readonly before: Memory;
  readonly after: Memory;
}

/** Memory after three collections (the heap's garbage does not count). */
export async function settledMemory(): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i += 1) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed };
}

/** The in-memory platform; each agent post (or bridge line) answers the message its room waits on. */
class AnsweringPlatform extends MemoryAdapter {
  private readonly waiting = new Map<string, (kind: 'answer' | 'error') => void>();
  readonly answers = new Map<string, number>();
  errors = 0;
  readonly errorLines = new Set<string>();

  override async post(message: Outbound): Promise<Posted> {
    const posted = await super.post(message);
    if (message.agent) this.answers.set(message.channel, (this.answers.get(message.channel) ?? 0) + 1);
    else {
      this.errors += 1;
      if (this.errorLines.size < 3) this.errorLines.add(message.text.slice(0, 200));
    }
    const waiter = this.waiting.get(message.channel);
    this.waiting.delete(message.channel);
    waiter?.(message.agent ? 'answer' : 'error');
    return posted;
  }

  /** A human asks the agent in `room`; resolves with what came back, or `lost` after ANSWER_TIMEOUT_MS. */
  ask(room: string, text: string): Promise<'answer' | 'error' | 'lost'> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(room);
        resolve('lost');
      }, ANSWER_TIMEOUT_MS);
      this.waiting.set(room, (kind) => {
        clearTimeout(timer);
        resolve(kind);
      });
      void this.say(text, { channel: room, user: 'alice' });
    });
  }
}

/** The bare model client: one awaited chat completion per message, nothing stored (the baseline). */
function bareAsk(llm: string): (room: string, text: string) => Promise<'answer' | 'error' | 'lost'> {
  return async (_room, text) => {
    const response = await fetch(`${llm}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
      body: JSON.stringify({ model: 'bare', messages: [{ role: 'user', content: text }] }),
    });
    await response.json();
    return response.ok ? 'answer' : 'error';
  };
}

/**
 * Every room at once: its first message (the room opens), then one message after another, each sent when the last
 * was answered, for `seconds`.
 */
async function converse(
  rooms: readonly string[],
  seconds: number,
  ask: (room: string, text: string) => Promise<'answer' | 'error' | 'lost'>,
) {
  const opening = performance.now();
  const first = await Promise.all(rooms.map((room) => ask(room, `@data question 0 in ${room}`)));
  const openMs = performance.now() - opening;
  const sent = new Map(rooms.map((room) => [room, 1]));
  let lost = first.filter((kind) => kind === 'lost').length;
  const added: number[] = [];
  const started = performance.now();
  const cpu = process.cpuUsage();
  const deadline = started + seconds * 1000;
  await Promise.all(
    rooms.map(async (room) => {
      for (let i = 1; performance.now() < deadline; i += 1) {
        const at = performance.now();
        sent.set(room, i + 1);
        const kind = await ask(room, `@data question ${i} in ${room}`);
        if (kind === 'lost') lost += 1;
        else if (kind === 'answer') added.push(performance.now() - at - MODEL_MS);
      }
    }),
  );
  const asked = [...sent.values()].reduce((sum, n) => sum + n, 0);
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  return { openMs, added, lost, sent, asked, cpuMs, windowS: (performance.now() - started) / 1000 };
}

async function roomsChild(job: Extract<ChildJob, { part: 'rooms' }>): Promise<RoomsResult> {
  const rooms = Array.from({ length: job.rooms }, (_, i) => `room${i}`);
  if (job.mode === 'bare') {
    await bareAsk(job.llm)('warm', 'warm-up');
    const before = await settledMemory();
    const run = await converse(rooms, job.seconds, bareAsk(job.llm));
    const after = await settledMemory();
    return {
      rooms: job.rooms,
      fillMs: 0,
      openMs: run.openMs,
      added: run.added,
      lost: run.lost,
      windowS: run.windowS,
      cpuMs: run.cpuMs,
      asked: run.asked + 1,
      answered: run.added.length,
      doubled: 0,
      errors: 0,
      errorLines: [],
      before,
      after,
    };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-limits-'));
  const store = openStore(path.join(dir, 'roundtable.db'));
  const config = testConfig({
    agents: [{ name: 'data', activation: 'mention' }],
    // The default retries: a saturated bridge's event loop lags, and a call may meet a kept-alive connection the
    // model server has just closed ("other side closed"); the next attempt takes a new one, as in production.
    env: { OPENAI_BASE_URL: job.llm, LLM_TIMEOUT_S: '60' },
  });
  const platform = new AnsweringPlatform();
  const bridge = createBridge({
    config,
    store,
    sandbox: new FakeSandbox(),
    adapters: [platform],
    logger: silentLogger(),
  });
  await bridge.start();
  try {
    // One room first, so what the first turn loads (the tokenizer, the model client) is not counted per room.
    if ((await platform.ask('warm', '@data warm-up')) !== 'answer') throw new Error('the warm-up turn got no answer');
    await bridge.idle();
    const before = await settledMemory();
    const filling = performance.now();
    await Promise.all(
      rooms.map(async (room) => {
        for (let i = 0; i < job.history; i += 1) {
          await platform.say(`earlier message ${i} in ${room}: ${'words '.repeat(15)}`, { channel: room });
        }
      }),
    );
    await bridge.idle();
    const fillMs = performance.now() - filling;
    const run = await converse(rooms, job.seconds, (room, text) => platform.ask(room, text));
    await bridge.idle();
    const after = await settledMemory();
    let doubled = 0;
    for (const room of rooms) doubled += Math.max(0, (platform.answers.get(room) ?? 0) - (run.sent.get(room) ?? 0));
    return {
      rooms: job.rooms,
      fillMs,
      openMs: run.openMs,
      answered: run.added.length,
      asked: run.asked + 1,
      windowS: run.windowS,
      cpuMs: run.cpuMs,
      added: run.added,
      lost: run.lost,
      doubled,
      errors: platform.errors,
      errorLines: [...platform.errorLines],
      before,
      after,
    };
  } finally {
    await bridge.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Resolves when the room's newest stored message is `text` (bounded). */
async function stored(store: StorePort, platform: string, channel: string, text: string): Promise<void> {
  const room = await store.rooms.open(platform, channel);
  const until = performance.now() + 60_000;
  while (performance.now() < until) {
    const [newest] = (await store.rooms.history(room.id, 1)).slice(-1);
    if (newest?.content === text) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the bridge did not store "${text}" within 60 s`);
}

/**
 * A bridge with one `mention` agent per identity, each its own bot (Discord) or app (Slack): how long start() takes
 * to log them all in, and the memory held once the parent's traffic (every identity receives every message) is
 * stored.
 */
async function identitiesChild(job: Extract<ChildJob, { part: 'identities' }>): Promise<IdentitiesResult> {
  const config = testConfig({
    agents: job.identities.map((identity, i) => ({
      name: identity.name,
      activation: 'mention' as const,
      ...(job.platform === 'discord'
        ? { discord: { token: identity.token, control: i === 0 } }
        : {
            slack: {
              botToken: identity.token,
              appToken: identity.appToken,
              signingSecret: undefined,
              control: i === 0,
            },
          }),
    })),
    env:
      job.platform === 'discord'
        ? { DISCORD_API_URL: job.api }
        : { SLACK_API_URL: job.api, SLACK_REPLY_IN_THREAD: 'false' },
  });
  const store = openStore(':memory:');
  const adapter =
    job.platform === 'discord'
      ? createDiscordAdapter({ config, logger: silentLogger() })
      : new SlackAdapter({ config, logger: silentLogger() });
  const bridge = createBridge({
    config,
    store,
    sandbox: new FakeSandbox(),
    adapters: [adapter],
    logger: silentLogger(),
  });
  const before = await settledMemory();
  const started = performance.now();
  await bridge.start();
  const connectMs = performance.now() - started;
  try {
    const lines = createInterface({ input: process.stdin });
    const sent = new Promise<void>((resolve) => lines.once('line', () => resolve()));
    console.log('READY');
    await sent;
    lines.close();
    await stored(store, job.platform, job.channel, job.last);
    await bridge.idle();
    return { count: job.identities.length, connectMs, before, after: await settledMemory() };
  } finally {
    await bridge.stop();
    await store.close();
  }
}

const job = JSON.parse(process.env.BENCH_CHILD ?? 'null') as ChildJob | null;
if (job) {
  const result = job.part === 'rooms' ? await roomsChild(job) : await identitiesChild(job);
  // A pipe is written asynchronously: exit once the whole line is out (a large result was cut off by exiting at once).
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`, () => process.exit(0));
}
