import pino from 'pino';
import { type Bridge, createBridge, type LlmFactory, type Scheduler } from '../../src/bridge/index.js';
import type { Config } from '../../src/config/index.js';
import { type Logger, silentLogger } from '../../src/log.js';
import type { ChatAdapter, Sandbox } from '../../src/ports.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type TestAgent, testConfig } from './config.js';
import { MemoryAdapter } from './memory-adapter.js';
import { dataOf } from './untrusted.js';

export interface Harness {
  readonly llm: FakeOpenAI;
  readonly config: Config;
  readonly store: SqliteStore;
  readonly sandbox: Sandbox;
  readonly adapter: MemoryAdapter;
  bridge: Bridge;
  /** Stops the bridge and starts a new one on the same store, as a process restart would. */
  restart(): Promise<Bridge>;
  close(): Promise<void>;
}

/** A bridge wired to the fake OpenAI server, an in-memory platform and (by default) a fake sandbox. */
export async function startHarness(options: {
  agents: TestAgent[];
  env?: Record<string, string>;
  sandbox?: Sandbox;
  storeFile?: string;
  adapters?: ChatAdapter[];
  /** Builds the configuration instead (e.g. with loadConfig), given the fake model server's URL. */
  config?: (llmBaseURL: string) => Config;
  /** Where the bridge logs (default: nowhere). */
  logger?: Logger;
  /** Builds each agent's LLM client instead of the bridge's default (still pointed at the fake by the config). */
  llm?: (config: Config) => LlmFactory;
  /** How the fake model reports usage (default: a chars/4 estimate). */
  llmUsage?: 'estimate' | 'openai';
  /** The bridge's clock and what runs its deadlines (default: the process's). */
  clock?: () => number;
  scheduler?: Scheduler;
}): Promise<Harness> {
  const llm = await startFakeOpenAI(options.llmUsage ? { usage: options.llmUsage } : {});
  const config =
    options.config?.(llm.baseURL) ??
    testConfig({
      agents: options.agents,
      env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', LLM_TIMEOUT_S: '10', ...options.env },
    });
  const logger = options.logger ?? silentLogger();
  const store = openStore(options.storeFile ?? ':memory:');
  const sandbox = options.sandbox ?? new FakeSandbox();
  const adapter = new MemoryAdapter();
  const make = () =>
    createBridge({
      config,
      store,
      sandbox,
      adapters: [adapter, ...(options.adapters ?? [])],
      logger,
      ...(options.llm ? { llm: options.llm(config) } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    });
  const harness: Harness = {
    llm,
    config,
    store,
    sandbox,
    adapter,
    bridge: make(),
    async restart() {
      await harness.bridge.stop(); // like a process stopping: turns in flight are cut short

      harness.bridge = make();
      await harness.bridge.start();
      return harness.bridge;
    },
    async close() {
      await harness.bridge.stop();
      await store.close();
      await llm.close();
    },
  };
  await harness.bridge.start();
  return harness;
}

/** The name of the agent a recorded request was made for (from the room note in its system prompt). */
export function agentOf(request: { messages: Array<{ role: string; content?: unknown }> }): string {
  const system = String(request.messages[0]?.content ?? '');
  return /You are @([A-Za-z0-9_-]+) in a shared chat room/.exec(system)?.[1] ?? '?';
}

type Request = { messages: Array<{ role: string; content?: unknown }> };

/** The system prompt of a recorded request (the bridge's rules, the agent's card, its knowledge). */
export function systemOf(request: Request): string {
  return String(request.messages[0]?.content ?? '');
}

/** Where the turn's note is: the final user message (tool rounds of the same turn come after it). */
function noteIndex(request: Request): number {
  for (let i = request.messages.length - 1; i >= 0; i--) if (request.messages[i]?.role === 'user') return i;
  return -1;
}

/** The turn's note of a recorded request: recent actions, retrieved messages, budget status, situation. */
export function turnNoteOf(request: Request): string {
  return String(request.messages[noteIndex(request)]?.content ?? '');
}

/** The situation of a recorded request (why the agent was woken, a resume summary, chat requests). */
export function situationOf(request: Request): string {
  const note = turnNoteOf(request);
  const at = note.indexOf('>>> SITUATION <<<\n');
  return at < 0 ? '' : note.slice(at + '>>> SITUATION <<<\n'.length);
}

/** The room's history in a recorded request: the messages between the system prompt and the turn's note. */
export function roomMessagesOf<T extends Request>(request: T): T['messages'] {
  return request.messages.slice(1, Math.max(1, noteIndex(request)));
}

/** The newest room message a recorded request shows (`[@speaker]: text`). */
export function newestOf(request: Request): string {
  return String(roomMessagesOf(request).at(-1)?.content ?? '');
}

/** What the tools answered within a recorded request, in order: each the body of the untrusted block it came in. */
export function toolResultsOf(request: Request | undefined): string[] {
  return (request?.messages ?? []).filter((m) => m.role === 'tool').map((m) => dataOf(m.content));
}

/** A debug-level logger whose JSON lines are kept in `lines` (for tests of what the log says). */
export function captureLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return { logger, lines };
}
