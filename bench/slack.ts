/**
 * Slack benchmark, everything on 127.0.0.1 against the fake Slack workspace (Web API + Socket Mode):
 * latency from the fake sending a message's events_api envelope to the reply's chat.postMessage
 * arriving, p50/p99 over 500 messages each, for
 *  - a bare Bolt app replying with say() (the baseline),
 *  - the Slack adapter alone, with a sink that posts the reply at once (what the adapter adds),
 *  - the whole bridge (adapter → store → router → fake LLM answering at once → post through the agent's app),
 * all measured in the same run, messages interleaved so drift hits each alike. Goals: the adapter adds under 2 ms at
 * p50 over the bare app, and so does the whole bridge (about 1 ms of it the fake LLM's round trip the bare app does
 * not make).
 *   npm run bench:slack [-- --smoke]
 */
import { performance } from 'node:perf_hooks';
import { App } from '@slack/bolt';
import { boltLogger } from '../adapters/slack/bolt-logger.js';
import { SlackAdapter } from '../adapters/slack/index.js';
import { webClientOptions } from '../adapters/slack/web-call.js';
import { createBridge } from '../src/bridge/index.js';
import { silentLogger } from '../src/log.js';
import type { AdapterSink } from '../src/ports.js';
import { openStore } from '../src/store/index.js';
import { FakeSandbox } from '../test/fakes/fake-sandbox.js';
import { startFakeOpenAI } from '../test/fakes/openai-server/index.js';
import { type FakeChannel, type FakeHuman, type FakeSlack, startFakeSlack } from '../test/fakes/slack/index.js';
import { testConfig } from '../test/helpers/config.js';
import { slackKeys } from '../test/slack/recording-sink.js';
import { reportGoal } from './lib/goals.js';
import { sized } from './lib/mode.js';

const MESSAGES = sized(500, 20);
const WARM_UP = sized(50, 5);

/** One message into `channel`; resolves with ms from its envelope leaving the fake to the reply's chat.postMessage. */
async function roundTrip(slack: FakeSlack, human: FakeHuman, channel: FakeChannel, tag: string): Promise<number> {
  const before = slack.apiCalls.length;
  const sentAt = performance.now();
  slack.say(human, channel, `question ${tag}`);
  const reply = await slack.waitFor(
    () =>
      slack.apiCalls
        .slice(before)
        .find(
          (c) => c.method === 'chat.postMessage' && c.args.channel === channel.id && String(c.args.text).includes(tag),
        ),
    10_000,
    `reply to ${tag}`,
  );
  return reply.at - sentAt;
}

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const slack = await startFakeSlack();
  const alice = slack.addHuman('alice', 'Alice Smith');
  const bareApp = slack.addApp('bare');
  const echoApp = slack.addApp('echo');
  const agentApp = slack.addApp('agent');
  const bareRoom = slack.addChannel('bare', [alice, bareApp]);
  const echoRoom = slack.addChannel('echo', [alice, echoApp]);
  const agentRoom = slack.addChannel('agent', [alice, agentApp]);
  const env = { SLACK_API_URL: slack.apiUrl, SLACK_REPLY_IN_THREAD: 'false' };

  // Baseline: a bare Bolt app, built with the same client options, replying directly.
  const bare = new App({
    token: bareApp.botToken,
    appToken: bareApp.appToken,
    socketMode: true,
    logger: boltLogger(silentLogger()),
    clientOptions: webClientOptions(slack.apiUrl),
  });
  bare.message(async ({ message, say }) => {
    await say(`answer to ${'text' in message ? message.text : ''}`);
  });
  await bare.start();

  // The adapter alone: a sink that posts the answer through the adapter as soon as a message arrives.
  const echoConfig = testConfig({ agents: [{ name: 'echo', slack: slackKeys(echoApp, { control: true }) }], env });
  const echo = new SlackAdapter({ config: echoConfig, logger: silentLogger() });
  const sink: AdapterSink = {
    receive: async (event) => {
      void echo.post({ channel: event.channel, agent: 'echo', text: `answer to ${event.text}` });
    },
    command: async () => 'ok',
    lastMessageId: () => undefined,
  };
  await echo.start(sink);

  // The whole bridge, with a model that answers at once. It answers the newest question in the room's history: the
  // context's last message is the turn's note (budget status, situation), not the message being answered.
  const llm = await startFakeOpenAI();
  llm.respond((request) => {
    const asked = request.messages.filter((message) => message.role === 'user').map((m) => String(m.content));
    const tags = asked.join('\n').match(/\S+-end/g) ?? ['?'];
    return { content: `answer to ${tags.at(-1)}` };
  });
  const bridgeConfig = testConfig({
    agents: [{ name: 'agent', activation: 'always', slack: slackKeys(agentApp, { control: true }) }],
    env: { ...env, OPENAI_BASE_URL: llm.baseURL, HISTORY_LIMIT: '20' },
  });
  const store = openStore(':memory:');
  const bridge = createBridge({
    config: bridgeConfig,
    store,
    sandbox: new FakeSandbox(),
    adapters: [new SlackAdapter({ config: bridgeConfig, logger: silentLogger() })],
    logger: silentLogger(),
  });
  await bridge.start();
  await slack.connected('bare', 'echo', 'agent');

  const runs = { bare: [] as number[], adapter: [] as number[], bridge: [] as number[] };
  for (let i = 0; i < WARM_UP + MESSAGES; i += 1) {
    const b = await roundTrip(slack, alice, bareRoom, `bare-${i}-end`);
    const a = await roundTrip(slack, alice, echoRoom, `echo-${i}-end`);
    const r = await roundTrip(slack, alice, agentRoom, `agent-${i}-end`);
    await bridge.idle();
    if (i >= WARM_UP) {
      runs.bare.push(b);
      runs.adapter.push(a);
      runs.bridge.push(r);
    }
  }

  await bridge.stop();
  await echo.stop();
  await bare.stop();
  await store.close();
  await llm.close();
  await slack.close();

  const row = (label: string, samples: number[]) =>
    `${label.padEnd(44)} p50 ${percentile(samples, 50).toFixed(2).padStart(7)} ms   p99 ${percentile(samples, 99).toFixed(2).padStart(7)} ms`;
  const p50 = {
    bare: percentile(runs.bare, 50),
    adapter: percentile(runs.adapter, 50),
    bridge: percentile(runs.bridge, 50),
  };
  console.log(`Slack: envelope sent → reply's chat.postMessage, ${MESSAGES} messages each (after ${WARM_UP} warm-up)`);
  console.log(row('bare Bolt app, say() (baseline)', runs.bare));
  console.log(row('Slack adapter, sink posting at once', runs.adapter));
  console.log(row('bridge: adapter + store + router + fake LLM', runs.bridge));
  console.log(
    `ratio adapter/bare p50 ${(p50.adapter / p50.bare).toFixed(2)}, bridge/bare p50 ${(p50.bridge / p50.bare).toFixed(2)}`,
  );
  const how = `the fake's events_api envelope -> the reply's chat.postMessage, ${MESSAGES} messages each after ${WARM_UP} warm-up, the three apps interleaved in this run`;
  reportGoal({
    figure: `slack adapter: adds ${(p50.adapter - p50.bare).toFixed(2)} ms at p50 over a bare Bolt app`,
    goal: '< 2 ms',
    met: p50.adapter - p50.bare < 2,
    how,
  });
  reportGoal({
    figure: `slack bridge: adds ${(p50.bridge - p50.bare).toFixed(2)} ms at p50 over a bare Bolt app (fake LLM round trip included)`,
    goal: '< 2 ms',
    met: p50.bridge - p50.bare < 2,
    how,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
