/**
 * The real bridge wired to the Discord adapter, which talks to the fake Discord; the fake OpenAI server plays
 * the agents and a fake sandbox runs their commands. One harness per test; close() ends every socket.
 */
import { createDiscordAdapter } from '../../adapters/discord/index.js';
import type { Backoff } from '../../src/bridge/backoff.js';
import { type Bridge, createBridge } from '../../src/bridge/index.js';
import type { Config } from '../../src/config/index.js';
import { type Logger, silentLogger } from '../../src/log.js';
import type { AdapterSink, ChatAdapter, Inbound, Outbound, Posted, Sandbox, StreamingPost } from '../../src/ports.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type TestAgent, testConfig } from '../helpers/config.js';

/** Passes everything through to the Discord adapter and notes which messages the bridge has taken in. */
class ObservedAdapter implements ChatAdapter {
  readonly platform: string;
  readonly received: Inbound[] = [];
  private readonly waiters: (() => void)[] = [];

  /** Present only when the adapter streams (as the bridge checks). */
  readonly stream?: (channel: string, agent: string) => StreamingPost | undefined;

  constructor(readonly inner: ChatAdapter) {
    this.platform = inner.platform;
    if (inner.stream) this.stream = (channel, agent) => inner.stream?.(channel, agent);
  }

  start(sink: AdapterSink): Promise<void> {
    return this.inner.start({
      ...sink,
      receive: async (event) => {
        await sink.receive(event);
        this.received.push(event);
        for (const wake of this.waiters.splice(0)) wake();
      },
      command: (event) => sink.command(event),
      lastMessageId: (platform, channel) => sink.lastMessageId(platform, channel),
      ...(sink.directRooms ? { directRooms: (platform: string) => sink.directRooms?.(platform) ?? [] } : {}),
    });
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }

  post(message: Outbound, options?: { signal?: AbortSignal }): Promise<Posted> {
    return this.inner.post(message, options);
  }

  async closeCard(channel: string, messageId: string, text: string): Promise<void> {
    await this.inner.closeCard?.(channel, messageId, text);
  }

  async typing(channel: string, agent: string): Promise<void> {
    await this.inner.typing?.(channel, agent);
  }

  async openDirect(agent: string, user: string): Promise<string | undefined> {
    return this.inner.openDirect?.(agent, user);
  }

  async resolveChannel(reference: string): Promise<string | undefined> {
    return this.inner.resolveChannel?.(reference);
  }

  async mayPost(channel: string, userId: string): Promise<boolean | undefined> {
    return this.inner.mayPost?.(channel, userId);
  }

  async mayDirect(userId: string, to: string, room: string): Promise<boolean | undefined> {
    return this.inner.mayDirect?.(userId, to, room);
  }

  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

export interface DiscordHarness {
  readonly discord: FakeDiscord;
  readonly llm: FakeOpenAI;
  /** The fake sandbox (the bridge's unless another was given). */
  readonly sandbox: FakeSandbox;
  readonly config: Config;
  readonly store: SqliteStore;
  bridge: Bridge;
  adapter: ObservedAdapter;
  /** Resolves once the bridge has taken in (stored or deduplicated) the platform message `id`. */
  received(id: string): Promise<void>;
  /** Waits for the bridge to take in `id`, then for every room to finish. */
  settle(id: string): Promise<void>;
  /** Stops the bridge (every bot disconnects) without starting it again. */
  down(): Promise<void>;
  /** Starts a new bridge and adapter on the same store, as a restarted process would. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Agents; each gets a Discord bot named `<name>-bot` with token `tok-<name>` unless `discord: false`. */
  readonly agents: readonly (Omit<TestAgent, 'discord'> & { discord?: false; control?: boolean })[];
  readonly humans?: { name: string; nick?: string; manageChannels?: boolean; roles?: string[] }[];
  readonly env?: Record<string, string>;
  /** Operators by fake human name (their ids go into OPERATORS). */
  readonly operators?: readonly string[];
  /** People by fake human name whose ids go into ACCESS_USERS. */
  readonly accessUsers?: readonly string[];
  /** A folder for the channels' workspaces (uploads land there); none by default. */
  readonly workspaces?: string;
  /** Where the bridge and the adapter log (default: nowhere). */
  readonly logger?: Logger;
  /** The bridge's waits between tries of a store write or a post (default: the bridge's own). */
  readonly backoff?: Backoff;
  /** The bridge's clock (default: the real one). */
  readonly clock?: () => number;
  /** The sandbox the bridge runs commands and MCP servers in (default: the harness's fake one, `sandbox`). */
  readonly sandbox?: Sandbox;
}

export async function startDiscordHarness(options: HarnessOptions): Promise<DiscordHarness> {
  const discord = await startFakeDiscord({
    bots: options.agents
      .filter((a) => a.discord !== false)
      .map((a) => ({ token: `tok-${a.name}`, name: `${a.name}-bot` })),
    humans: options.humans ?? [{ name: 'alice', nick: 'Alice' }, { name: 'carol' }],
    channels: ['general', 'dev'],
  });
  const llm = await startFakeOpenAI();
  const sandbox = new FakeSandbox(undefined, options.workspaces ? { workspaces: options.workspaces } : {});
  const config = testConfig({
    agents: options.agents.map(({ discord: wants, control, ...agent }) => ({
      ...agent,
      ...(wants === false ? {} : { discord: { token: `tok-${agent.name}`, control: control ?? false } }),
    })),
    env: {
      OPENAI_BASE_URL: llm.baseURL,
      LLM_MAX_RETRIES: '0',
      LLM_TIMEOUT_S: '10',
      DISCORD_API_URL: discord.apiURL,
      OPERATORS: (options.operators ?? []).map((name) => discord.human(name).id).join(','),
      ACCESS_USERS: (options.accessUsers ?? []).map((name) => discord.human(name).id).join(','),
      ...options.env,
    },
  });
  const store = openStore(':memory:');
  const build = () => {
    const adapter = new ObservedAdapter(
      createDiscordAdapter({
        config,
        logger: options.logger ?? silentLogger(),
        rest: { globalRequestsPerSecond: 10_000 },
      }),
    );
    const bridge = createBridge({
      config,
      store,
      sandbox: options.sandbox ?? sandbox,
      adapters: [adapter],
      logger: options.logger ?? silentLogger(),
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    return { adapter, bridge };
  };
  let running = true;
  const first = build();
  const harness: DiscordHarness = {
    discord,
    llm,
    sandbox,
    config,
    store,
    bridge: first.bridge,
    adapter: first.adapter,
    async received(id) {
      await harness.adapter.until(() => harness.adapter.received.some((event) => event.messageId === id));
    },
    async settle(id) {
      await harness.received(id);
      await harness.bridge.idle();
    },
    async down() {
      await harness.bridge.idle();
      await harness.bridge.stop();
      running = false;
    },
    async up() {
      const next = build();
      harness.adapter = next.adapter;
      harness.bridge = next.bridge;
      await harness.bridge.start();
      running = true;
    },
    async close() {
      if (running) await harness.bridge.stop();
      await store.close();
      await llm.close();
      await discord.close();
    },
  };
  await harness.bridge.start();
  return harness;
}
