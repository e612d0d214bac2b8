/**
 * The real bridge wired to the Slack adapter, which talks to the fake Slack workspace; the
 * fake OpenAI server plays the agents and a fake sandbox runs their commands. One harness
 * per test; close() ends every socket and server.
 */
import { SlackAdapter } from '../../adapters/slack/index.js';
import type { Backoff } from '../../src/bridge/backoff.js';
import { type Bridge, createBridge } from '../../src/bridge/index.js';
import type { Config } from '../../src/config/index.js';
import { type Logger, silentLogger } from '../../src/log.js';
import type { AdapterSink, ChatAdapter, Inbound, Outbound, Posted, StreamingPost } from '../../src/ports.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import type { StorePort } from '../../src/store/port.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import {
  type FakeApp,
  type FakeChannel,
  type FakeHuman,
  type FakeSlack,
  startFakeSlack,
} from '../fakes/slack/index.js';
import { type TestAgent, testConfig } from '../helpers/config.js';
import { slackKeys } from './recording-sink.js';

/** Passes everything through to the Slack adapter and notes which messages the bridge has taken in. */
class ObservedAdapter implements ChatAdapter {
  readonly platform: string;
  readonly received: Inbound[] = [];

  constructor(readonly inner: SlackAdapter) {
    this.platform = inner.platform;
    const stream = inner.stream;
    if (stream) this.stream = (channel, agent) => stream(channel, agent);
  }

  start(sink: AdapterSink): Promise<void> {
    return this.inner.start({
      ...sink,
      receive: async (event) => {
        const receipt = await sink.receive(event);
        this.received.push(event);
        return receipt;
      },
    });
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }

  post(message: Outbound, options?: { signal?: AbortSignal }): Promise<Posted> {
    return this.inner.post(message, options);
  }

  openDirect(agent: string, user: string): Promise<string | undefined> {
    return this.inner.openDirect(agent, user);
  }

  resolveChannel(reference: string): Promise<string | undefined> {
    return this.inner.resolveChannel(reference);
  }

  mayPost(channel: string, userId: string): Promise<boolean | undefined> {
    return this.inner.mayPost(channel, userId);
  }

  mayDirect(userId: string, to: string, room: string): Promise<boolean | undefined> {
    return this.inner.mayDirect(userId, to, room);
  }

  closeCard(channel: string, messageId: string, text: string): Promise<void> {
    return this.inner.closeCard(channel, messageId, text);
  }

  tell(channel: string, userId: string, text: string): Promise<boolean> {
    return this.inner.tell(channel, userId, text);
  }

  /** Present only when the adapter streams (SLACK_STREAM=update), like the adapter's own. */
  readonly stream?: (channel: string, agent: string) => StreamingPost | undefined;
}

export interface SlackHarnessAgent extends Omit<TestAgent, 'slack'> {
  readonly control?: boolean;
  /** HTTP mode (signing secret, events POSTed by the fake) instead of Socket Mode. */
  readonly http?: boolean;
}

export interface SlackHarness {
  readonly slack: FakeSlack;
  readonly llm: FakeOpenAI;
  readonly sandbox: FakeSandbox;
  readonly config: Config;
  readonly store: SqliteStore;
  bridge: Bridge;
  adapter: ObservedAdapter;
  /** Each agent's app in the fake workspace, by agent name. */
  readonly apps: Readonly<Record<string, FakeApp>>;
  /** `alice` (display name "Alice Smith") and `olga`, the operator. */
  readonly alice: FakeHuman;
  readonly olga: FakeHuman;
  /** `#general`, with both humans and every agent's app. */
  readonly general: FakeChannel;
  /** Waits for the bridge to take in the Slack message `ts`, then for every room to finish. */
  settle(ts: string): Promise<void>;
  /** Stops the bridge (every app disconnects) without starting it again. */
  down(): Promise<void>;
  /** Starts a new bridge and adapter on the same store, as a restarted process would. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startSlackHarness(options: {
  agents: readonly SlackHarnessAgent[];
  env?: Record<string, string>;
  /** A folder for the channels' workspaces (uploads land there); none by default. */
  workspaces?: string;
  /** Where the bridge and the adapter log (default: nowhere). */
  logger?: Logger;
  /** The clock the adapter measures a reconnect's gap by (default: the real one). */
  clock?: () => number;
  /** The bridge's waits between tries of a store write or a post (default: the bridge's own). */
  backoff?: Backoff;
  /** The store as every bridge of the harness sees it (default: the harness's store itself). */
  wrapStore?: (store: SqliteStore) => StorePort;
  /** More people in #general, by name (their display name the same). */
  humans?: readonly string[];
  /** People by name whose ids go into ACCESS_USERS. */
  accessUsers?: readonly string[];
}): Promise<SlackHarness> {
  const slack = await startFakeSlack();
  const llm = await startFakeOpenAI();
  const sandbox = new FakeSandbox(undefined, options.workspaces ? { workspaces: options.workspaces } : {});
  const apps: Record<string, FakeApp> = {};
  for (const agent of options.agents) apps[agent.name] = slack.addApp(agent.name);
  const alice = slack.addHuman('alice', 'Alice Smith');
  const olga = slack.addHuman('olga', 'Olga');
  const others = (options.humans ?? []).map((name) => slack.addHuman(name, name));
  const general = slack.addChannel('general', [alice, olga, ...others, ...Object.values(apps)]);
  const everyone = [alice, olga, ...others];
  const accessUsers = (options.accessUsers ?? []).map((name) => everyone.find((h) => h.name === name)?.id ?? name);
  const config = testConfig({
    agents: options.agents.map(({ control, http, ...agent }) => ({
      ...agent,
      slack: slackKeys(apps[agent.name] as FakeApp, { control: control ?? false, http: http ?? false }),
    })),
    env: {
      OPENAI_BASE_URL: llm.baseURL,
      LLM_MAX_RETRIES: '0',
      LLM_TIMEOUT_S: '10',
      SLACK_API_URL: slack.apiUrl,
      SLACK_PORT: '0',
      OPERATORS: olga.id,
      ...(accessUsers.length > 0 ? { ACCESS_USERS: accessUsers.join(',') } : {}),
      ...options.env,
    },
  });
  const store = openStore(':memory:');
  const bridgeStore = options.wrapStore?.(store) ?? store;
  const logger = options.logger ?? silentLogger();
  const build = () => {
    const adapter = new ObservedAdapter(
      new SlackAdapter({ config, logger, ...(options.clock ? { clock: options.clock } : {}) }),
    );
    const backoff = options.backoff ? { backoff: options.backoff } : {};
    return {
      adapter,
      bridge: createBridge({ config, store: bridgeStore, sandbox, adapters: [adapter], logger, ...backoff }),
    };
  };
  const first = build();
  const inner = first.adapter.inner;
  await first.bridge.start();
  let running = true;
  for (const agent of options.agents) {
    const app = apps[agent.name] as FakeApp;
    if (agent.http) app.requestUrl = `http://127.0.0.1:${inner.httpPort}/slack/events/${agent.name}`;
  }
  const socketApps = options.agents.filter((a) => !a.http).map((a) => a.name);
  if (socketApps.length > 0) await slack.connected(...socketApps);

  const harness: SlackHarness = {
    slack,
    llm,
    sandbox,
    config,
    store,
    bridge: first.bridge,
    adapter: first.adapter,
    apps,
    alice,
    olga,
    general,
    async settle(ts) {
      await slack.waitFor(
        () => harness.adapter.received.some((event) => event.messageId === ts),
        10_000,
        `message ${ts}`,
      );
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
      if (socketApps.length > 0) await slack.connected(...socketApps);
    },
    async close() {
      if (running) await harness.bridge.stop();
      await store.close();
      await llm.close();
      await slack.close();
    },
  };
  return harness;
}
