/**
 * A bridge that can crash: its store is a file, its platform outlives it, and `crash()` abandons the running
 * bridge without stopping it (nothing is flushed, nothing said; its store connection is closed under it and
 * its adapter goes dead), as a killed process would. `restart()` boots a new bridge on the same file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Bridge, createBridge } from '../../src/bridge/index.js';
import type { Config } from '../../src/config/index.js';
import { silentLogger } from '../../src/log.js';
import type { AdapterSink, ChatAdapter, Outbound, Posted, PostOptions } from '../../src/ports.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type TestAgent, testConfig } from './config.js';

export interface PlatformMessage {
  readonly id: string;
  readonly channel: string;
  /** The agent that posted it, null for the bridge's own lines; undefined for a human's message. */
  readonly agent?: string | null;
  readonly user?: string;
  readonly text: string;
  readonly key?: string | undefined;
}

/** The chat platform: it keeps every message, whoever is connected, and deduplicates posts by key. */
export class MemoryPlatform {
  readonly messages: PlatformMessage[] = [];
  private next = 1;
  /** The next post is created on the platform, then the bridge dies before hearing back. */
  crashOnPost: ((message: Outbound) => boolean) | undefined;
  onCrash: (() => void) | undefined;
  /** Told of every message the bridge posts, as it is posted. */
  onPost: ((message: PlatformMessage) => void) | undefined;
  /** Runs when a bridge has connected, before it catches up (a human writing at that moment). */
  onConnect: (() => Promise<unknown>) | undefined;
  connection: PlatformConnection | undefined;

  add(message: Omit<PlatformMessage, 'id'>): PlatformMessage {
    const stored = { ...message, id: String(this.next++) };
    this.messages.push(stored);
    return stored;
  }

  /** Messages posted through the bridge (agents and system lines), in a channel. */
  posts(channel = 'room'): PlatformMessage[] {
    return this.messages.filter((m) => m.channel === channel && m.agent !== undefined);
  }

  /** `[@agent]: text` / `[system]: text` / `[user]: text`, in order. */
  transcript(channel = 'room'): string[] {
    return this.messages
      .filter((m) => m.channel === channel)
      .map((m) =>
        m.agent === undefined ? `[${m.user}]: ${m.text}` : `[${m.agent ? `@${m.agent}` : 'system'}]: ${m.text}`,
      );
  }

  /** A human writes; the bridge hears it if it is connected (else it catches up after its restart). */
  async say(text: string, options: { channel?: string; user?: string } = {}): Promise<PlatformMessage> {
    const message = this.add({ channel: options.channel ?? 'room', user: options.user ?? 'alice', text });
    await this.connection?.deliver(message);
    return message;
  }
}

/** One bridge process's connection to the platform. */
export class PlatformConnection implements ChatAdapter {
  readonly platform = 'test';
  dead = false;
  private sink: AdapterSink | undefined;
  /** Live messages wait until the catch-up is done, so the room's history stays in order (as the real adapters do). */
  private held: PlatformMessage[] | null = [];

  constructor(private readonly world: MemoryPlatform) {}

  async start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    this.world.connection = this;
    const hook = this.world.onConnect;
    this.world.onConnect = undefined;
    await hook?.();
  }

  async stop(): Promise<void> {
    this.sink = undefined;
  }

  async post(message: Outbound, options: PostOptions = {}): Promise<Posted> {
    if (this.dead) return new Promise(() => {});
    // Like Discord's nonce: a post with a key already used is the same post.
    const earlier = options.key
      ? this.world.messages.find((m) => m.key === options.key && m.agent === message.agent)
      : undefined;
    if (earlier) return { messageIds: [earlier.id] };
    const posted = this.world.add({
      channel: message.channel,
      agent: message.agent,
      text: message.text,
      key: options.key,
    });
    this.world.onPost?.(posted);
    if (this.world.crashOnPost?.(message)) {
      this.world.crashOnPost = undefined;
      this.world.onCrash?.();
      return new Promise(() => {});
    }
    if (message.agent) queueMicrotask(() => void this.deliver(posted));
    return { messageIds: [posted.id] };
  }

  /** What every room missed since the bridge's catch-up mark, oldest first. */
  async catchUpRooms(): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    for (const channel of new Set(this.world.messages.map((m) => m.channel))) {
      const after = sink.lastMessageId(this.platform, channel);
      if (after === undefined) continue;
      let last = after;
      for (const message of this.world.messages) {
        if (message.channel !== channel || Number(message.id) <= Number(after)) continue;
        await this.forward(message, true);
        last = message.id;
      }
      sink.caughtUp?.(this.platform, channel, last);
    }
    const held = this.held ?? [];
    this.held = null;
    for (const message of held) await this.forward(message);
  }

  async deliver(message: PlatformMessage): Promise<void> {
    if (this.held) this.held.push(message);
    else await this.forward(message);
  }

  private async forward(message: PlatformMessage, missed = false): Promise<void> {
    if (this.dead || !this.sink || message.agent === null) return;
    await this.sink.receive({
      platform: this.platform,
      channel: message.channel,
      messageId: message.id,
      author:
        message.agent === undefined
          ? { id: `u-${message.user}`, name: message.user ?? 'alice', kind: 'human' }
          : { id: `bot-${message.agent}`, name: message.agent, kind: 'agent' },
      text: message.text,
      ...(missed ? { missed } : {}),
    });
  }
}

export interface CrashHarness {
  readonly llm: FakeOpenAI;
  readonly platform: MemoryPlatform;
  readonly sandbox: FakeSandbox;
  readonly config: Config;
  store: SqliteStore;
  bridge: Bridge;
  /** The bridge dies where it stands. */
  crash(): void;
  /** A new bridge on the same store file and platform (after a crash, or a clean stop). */
  boot(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startCrashHarness(options: { agents: TestAgent[]; env?: Record<string, string> }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-crash-'));
  const file = path.join(dir, 'rt.db');
  const llm = await startFakeOpenAI();
  const config = testConfig({
    agents: options.agents,
    env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', LLM_TIMEOUT_S: '30', ...options.env },
  });
  const platform = new MemoryPlatform();
  const sandbox = new FakeSandbox();
  let connection: PlatformConnection | undefined;
  let alive = false;
  const h: CrashHarness = {
    llm,
    platform,
    sandbox,
    config,
    store: undefined as unknown as SqliteStore,
    bridge: undefined as unknown as Bridge,
    crash() {
      if (!alive) return;
      alive = false;
      if (connection) connection.dead = true;
      void h.store.close();
    },
    async boot() {
      h.store = openStore(file);
      connection = new PlatformConnection(platform);
      h.bridge = createBridge({ config, store: h.store, sandbox, adapters: [connection], logger: silentLogger() });
      alive = true;
      await h.bridge.start();
    },
    async restart() {
      h.crash();
      await h.boot();
    },
    async close() {
      if (alive) {
        await h.bridge.stop();
        await h.store.close();
      }
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  platform.onCrash = () => h.crash();
  await h.boot();
  return h;
}
