/**
 * The traced process (started by scripts/trace-route.ts with `node --import tsx`, an IPC channel, and `--warm` to
 * send one untraced message first): instruments the project's modules as they load, starts the fake Discord, the
 * fake model and a bridge with one `mention` agent (the Discord tests' harness), waits until the bridge is started
 * and idle, then records every project function entry from sending one human message until the bridge has taken the
 * echo of its reply (the fake sends the bot's own message back through the gateway) and is idle again, each with its
 * asynchronous origin (causality.ts) and the event it belongs to (events.ts), and sends the entries back.
 */
import { executionAsyncId } from 'node:async_hooks';
import { register } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Causality } from './causality.js';
import { COMPOSITION, EventLedger, ROOM_LOOP } from './events.js';
import type { HooksData } from './hooks.js';
import { type RawEntry, TRACE_KEY, type TraceRun } from './protocol.js';

// import.meta.dirname only from Node 20.11; the engines field allows any 20.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The project's own code: what is instrumented and counted. */
const FOLDERS = ['src', 'adapters'];
const REPLY_TIMEOUT_MS = 60_000;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function record(warm: boolean): Promise<TraceRun> {
  const causality = new Causality();
  const ledger = new EventLedger();
  const entries: (RawEntry & { chain: number })[] = [];
  let recording = false;
  (globalThis as Record<symbol, unknown>)[Symbol.for(TRACE_KEY)] = (file: string, fn: string, argument: unknown) => {
    if (!recording) return;
    const chain = ledger.enter(file, fn, argument, causality);
    entries.push({ file, fn, origin: causality.originOf(executionAsyncId()), chain });
  };
  const { port1, port2 } = new MessageChannel();
  let instrumented = 0;
  const closures: string[] = [];
  port1.on('message', (message: { file: string; functions: number; enclosed: readonly string[] }) => {
    instrumented += message.functions;
    if (message.file === COMPOSITION.file) closures.push(...message.enclosed.map((fn) => `${message.file}:${fn}`));
  });
  port1.unref();
  const data: HooksData = {
    root,
    folders: FOLDERS,
    port: port2,
    options: {
      [ROOM_LOOP.file]: { withArgument: [ROOM_LOOP.deliver] },
      [COMPOSITION.file]: { enclosedBy: COMPOSITION.fn },
    },
  };
  register('./hooks.ts', import.meta.url, { data, transferList: [port2] });
  causality.enable();

  // Loaded only now, through the hooks: the project's modules come instrumented (the harness and fakes do not).
  const { startDiscordHarness } = await import('../../test/discord/discord-harness.js');
  const h = await startDiscordHarness({
    agents: [{ name: 'agent', activation: 'mention', control: true }],
    humans: [{ name: 'alice', nick: 'Alice' }],
  });
  h.llm.respond(() => ({ content: 'Hello, Alice.' }));
  const bot = h.discord.bot('agent-bot');
  /** Resolves with the bot's next message, calling `then` at the very moment the fake creates it. */
  const nextReply = (then: () => void) =>
    new Promise<{ id: string; content: string }>((resolve) => {
      const off = h.discord.onMessage((message) => {
        if (message.authorId !== bot.id) return;
        then();
        off();
        resolve(message);
      });
    });
  try {
    await h.bridge.idle();
    if (warm) {
      const answered = nextReply(() => {});
      h.discord.humanSays('general', 'alice', `<@${bot.id}> good morning`);
      const first = await within(answered, REPLY_TIMEOUT_MS, 'the untraced first message was not answered');
      // Its echo (the bot's own message, back through the gateway) is taken too before the traced message.
      await within(h.settle(first.id), REPLY_TIMEOUT_MS, 'the echo of the first reply was not taken');
    }
    // What a human typing "@agent hello" in Discord sends: a mention of the agent's bot.
    const sent = `<@${bot.id}> hello`;
    let postedAt = 0;
    let postedMs = 0;
    const replied = nextReply(() => {
      postedAt = entries.length;
      postedMs = performance.now();
    });
    causality.watching = true;
    recording = true;
    const startedAt = performance.now();
    h.discord.humanSays('general', 'alice', sent);
    const reply = await within(replied, REPLY_TIMEOUT_MS, 'the agent did not answer the traced message');
    await within(h.settle(reply.id), REPLY_TIMEOUT_MS, 'the echo of the reply was not taken');
    recording = false;
    causality.watching = false;
    causality.disable();
    const originTypes: Record<number, string> = { 0: 'root' };
    for (const entry of entries) originTypes[entry.origin] = causality.typeOf(entry.origin);
    return {
      entries: entries.map(({ chain, ...entry }) => ({ ...entry, event: ledger.eventOf(chain) })),
      originTypes,
      sent,
      reply: reply.content,
      ms: postedMs - startedAt,
      postedAt,
      events: ledger.events,
      closures,
      instrumented,
      warm,
    };
  } finally {
    recording = false;
    await h.close();
  }
}

const send = (message: { run: TraceRun } | { error: string }) =>
  new Promise<void>((resolve) => {
    if (!process.send) {
      console.error('record-route.ts reports over an IPC channel: run it through scripts/trace-route.ts');
      process.exitCode = 1;
      resolve();
      return;
    }
    process.send(message, () => resolve());
  });

try {
  await send({ run: await record(process.argv.includes('--warm')) });
} catch (error) {
  await send({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
} finally {
  process.disconnect?.();
}
