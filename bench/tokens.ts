/**
 * The token economy: one scripted room played once per context layout against a fake endpoint that reports
 * usage like OpenAI (real o200k counts; cached tokens by OpenAI's rule: the longest prefix shared with an earlier
 * request, from 1024 tokens on, in steps of 128). Prints per layout the calls, input / cached / uncached tokens,
 * the share of input characters that repeats an earlier request's prefix, and wall time, then the ratios.
 *   npm run bench -- tokens
 *
 * A layout is one entry in MODES: given the agents a message wakes, it makes their calls. Batched turns
 * (seed 004: several agents in one structured call) will be one more entry.
 */
import type { AgentConfig } from '../src/config/index.js';
import { runAgentTurn } from '../src/llm/agent-turn.js';
import {
  type ChatCompletionMessageParam,
  createOpenAiClient,
  type LlmClient,
  type LlmUsage,
} from '../src/llm/client.js';
import { renderMessage } from '../src/llm/context.js';
import { renderSituation, type Situation } from '../src/llm/situation.js';
import { turnContext } from '../src/llm/turn-context.js';
import { planWakes } from '../src/room/routing.js';
import type { RoomMessage } from '../src/room/types.js';
import { toolsFor } from '../src/tools/registry.js';
import type { ToolContext } from '../src/tools/tool.js';
import { FakeSandbox } from '../test/fakes/fake-sandbox.js';
import { type FakeOpenAI, repeatedPrefixShare, startFakeOpenAI } from '../test/fakes/openai-server/index.js';
import { testConfig } from '../test/helpers/config.js';

const HUMAN_MESSAGES = 20;

const persona = (role: string, habits: string[]) =>
  [
    `You are the team's ${role}.`,
    ...habits,
    'Keep answers short: a few sentences, numbers where you have them, no greetings and no sign-offs.',
    'When another agent already said what you would say, reply with exactly [pass].',
    'Never invent data: say what you would need to check, and how.',
  ].join(' ');

const config = testConfig({
  agents: [
    {
      name: 'ana',
      activation: 'always',
      systemPrompt: persona('planner', [
        'You turn the discussion into a plan with owners and dates.',
        'You track decisions and open questions, and you restate them when the room drifts.',
        'You prefer small, reversible steps and say what would make you change the plan.',
      ]),
    },
    {
      name: 'ben',
      activation: 'always',
      systemPrompt: persona('critic', [
        'You look for the weakest assumption in every proposal and name it plainly.',
        'You ask for evidence before agreeing, and you say which evidence would convince you.',
        'You are fair: when a proposal holds up, you say so in one line.',
      ]),
    },
    {
      name: 'cy',
      tools: ['bash', 'read_files', 'write_files'],
      systemPrompt: persona('engineer', ['You estimate effort in days and name the riskiest part of the work.']),
    },
    {
      name: 'dee',
      tools: ['bash', 'read_files', 'write_files'],
      systemPrompt: persona('data analyst', ['You answer with figures from the data and say how you got them.']),
    },
    {
      name: 'eve',
      tools: ['bash', 'read_files', 'write_files'],
      systemPrompt: persona('support lead', ['You speak for the customers: what they ask for, and what breaks.']),
    },
  ],
});
const agents = config.agents;
const MENTIONABLE = agents.filter((a) => a.activation === 'mention').map((a) => a.name);
const TOPICS = ['the launch date', 'pricing tiers', 'the onboarding flow', 'support hours', 'the Q3 roadmap'];

/** The human side of the script: every other message asks one of the mention-only agents. */
function humanMessage(i: number): string {
  const topic = TOPICS[i % TOPICS.length];
  return i % 2 === 0
    ? `@${MENTIONABLE[(i / 2) % MENTIONABLE.length]} what is your view on ${topic}? We need to decide this week. (${i + 1})`
    : `Let us revisit ${topic}: what changed since yesterday, and what is still open? (${i + 1})`;
}

/** The model side: a reply in the agent's voice to the newest message. */
function agentReply(agent: string, about: string, n: number): string {
  return (
    `${agent} on "${about.slice(0, 50)}": I looked at it again. The main risk is timing: two of the five ` +
    'open items depend on the vendor, and they have slipped before. The numbers from last week still hold ' +
    '(conversion 3.1%, churn 2.4%), so I would not change the plan yet. My suggestion is to keep the scope, ' +
    `name one owner per open item, and check again in two days with fresh figures (${n}).`
  );
}

/** A context layout: how one woken agent's call is made. */
interface Mode {
  readonly name: string;
  /**
   * Asks the agents `message` woke (in the router's order) and returns the replies to post, in order. One call per
   * agent asks them one at a time as the bridge does (every agent asked by name answers; of the others, the first
   * reply ends the round); a batched mode would ask them all in one call.
   */
  turn(
    woken: ReadonlyArray<{ readonly agent: AgentConfig; readonly asked: boolean }>,
    room: readonly RoomMessage[],
    message: RoomMessage,
  ): Promise<Array<{ agent: string; text: string }>>;
}

function situationFor(agent: AgentConfig, asked: boolean, message: RoomMessage): string {
  const situation: Situation = asked
    ? { kind: 'requested', requesters: [message.author], threads: [] }
    : { kind: 'observe' };
  return renderSituation(situation, agent.prompts);
}

type Budget = Parameters<typeof runAgentTurn>[0]['budget'];
type OnUsage = (usage: LlmUsage) => void;
type MakeMode = (client: LlmClient, onUsage: OnUsage) => Mode;

/** Runs one agent's call through the tool loop and the real OpenAI SDK. */
async function call(
  client: LlmClient,
  onUsage: OnUsage,
  agent: AgentConfig,
  messages: ChatCompletionMessageParam[],
  budget?: Budget,
) {
  const toolContext: ToolContext = {
    agent: agent.name,
    channelKey: 'bench:room',
    sandbox: new FakeSandbox(),
    commandTimeoutMs: 1000,
    signal: new AbortController().signal,
  };
  const output = await runAgentTurn({
    client,
    model: agent.model,
    messages,
    tools: toolsFor(agent.tools),
    toolContext,
    maxRounds: 3,
    budget,
    onUsage,
  });
  return output.text;
}

/** Each woken agent in turn, one call each. */
function oneCallPerAgent(
  name: string,
  client: LlmClient,
  onUsage: OnUsage,
  build: (
    agent: AgentConfig,
    room: readonly RoomMessage[],
    situation: string,
  ) => Promise<{
    messages: ChatCompletionMessageParam[];
    budget?: Budget;
  }>,
): Mode {
  return {
    name,
    async turn(woken, room, message) {
      const replies: Array<{ agent: string; text: string }> = [];
      for (const { agent, asked } of woken) {
        const { messages, budget } = await build(agent, room, situationFor(agent, asked, message));
        const text = await call(client, onUsage, agent, messages, budget);
        if (text.trim() === '[pass]') continue;
        replies.push({ agent: agent.name, text });
        if (!asked) break;
      }
      return replies;
    },
  };
}

// The layout before the token economy, reproduced as the baseline: the situation appended to the system prompt,
// and the last HISTORY_LIMIT messages (a window that slides by one message once the room is long).
function oldRoomNote(name: string, others: readonly string[]): string {
  const table = others.length > 0 ? others.map((n) => `@${n}`).join(', ') : 'no other agents';
  return [
    `You are @${name} in a shared chat room with humans and other agents (${table}).`,
    'Each message is shown as [@speaker]: text. Write your reply as plain text, without a [@name]: prefix.',
    'Mention someone with @name to ask them something; they will be woken to answer.',
    'If you have nothing useful to add, reply with exactly [pass] and nothing else.',
    'To stop the agents and hand the conversation back to the humans, include <world>pass</world>.',
  ].join('\n');
}

function oldLayout(agent: AgentConfig, room: readonly RoomMessage[], situation: string): ChatCompletionMessageParam[] {
  const others = agents.map((a) => a.name).filter((n) => n !== agent.name);
  const system = [agent.systemPrompt, oldRoomNote(agent.name, others), situation].join('\n\n');
  return [
    { role: 'system', content: system },
    ...room.slice(-config.settings.HISTORY_LIMIT).map(
      (m): ChatCompletionMessageParam => ({
        role: m.kind === 'agent' && m.author === agent.name ? 'assistant' : 'user',
        content: renderMessage(m),
      }),
    ),
  ];
}

const MODES: ReadonlyArray<{ name: string; make: MakeMode }> = [
  {
    name: 'old layout',
    make: (client, onUsage) =>
      oneCallPerAgent('old layout', client, onUsage, async (agent, room, situation) => ({
        messages: oldLayout(agent, room, situation),
      })),
  },
  {
    name: 'cache-friendly',
    make: (client, onUsage) =>
      oneCallPerAgent('cache-friendly', client, onUsage, (agent, room, situation) =>
        turnContext({
          agent,
          agentNames: agents.map((a) => a.name),
          roomKey: 'bench:room',
          // The bridge passes a window of the newest messages (HISTORY_LIMIT + 1, at least 64).
          history: room.slice(-Math.max(config.settings.HISTORY_LIMIT + 1, 64)),
          situation,
          tools: toolsFor(agent.tools),
          settings: config.settings,
        }),
      ),
  },
];

interface Figures {
  calls: number;
  input: number;
  cached: number;
  prefixShare: number;
  seconds: number;
}

async function play(make: MakeMode): Promise<Figures> {
  const fake: FakeOpenAI = await startFakeOpenAI({ usage: 'openai' });
  let replies = 0;
  // Each agent answers once after a human message (in its own words), and passes after that.
  fake.respond((request) => {
    const system = String(request.messages[0]?.content);
    const agent = /You are @([a-z]+) in a shared chat room/.exec(system)?.[1] ?? '?';
    for (const m of [...request.messages].reverse()) {
      if (m.role === 'assistant') return { content: '[pass]' };
      if (String(m.content).startsWith('[@user]: ')) {
        return { content: agentReply(agent, String(m.content).slice(9), ++replies) };
      }
    }
    return { content: '[pass]' };
  });
  const client = createOpenAiClient({
    baseURL: fake.baseURL,
    apiKey: 'bench',
    timeoutMs: 60_000,
    maxRetries: 0,
    stream: false,
  });
  // Usage as the client read it from each answer (what the bridge stores for /status).
  const totals = { input: 0, cached: 0 };
  const mode = make(client, (usage) => {
    totals.input += usage.input;
    totals.cached += usage.cached;
  });
  const room: RoomMessage[] = [];
  let id = 0;
  const add = (author: string, kind: RoomMessage['kind'], content: string) => {
    const mentions = [...content.matchAll(/@([a-z]+)/g)]
      .map((m) => m[1] ?? '')
      .filter((n) => agents.some((a) => a.name === n));
    const message: RoomMessage = {
      id: ++id,
      author,
      authorId: author,
      kind,
      content,
      mentions,
      toolRuns: [],
      at: id * 1000,
    };
    room.push(message);
    return message;
  };
  const started = process.hrtime.bigint();
  for (let i = 0; i < HUMAN_MESSAGES; i++) {
    // Routing as the bridge does it: whoever a message wakes (router rules) is asked; a reply is posted and
    // routed in turn, until nobody answers (bounded by the turn limit).
    const pending = [add('user', 'human', humanMessage(i))];
    for (let turns = 0; turns < config.settings.TURN_LIMIT; turns++) {
      const message = pending.shift();
      if (!message) break;
      const woken = planWakes(agents, message, room.slice(0, -1)).flatMap((wake) => {
        const agent = agents.find((a) => a.name === wake.agent);
        return agent ? [{ agent, asked: wake.reason === 'addressed' || wake.reason === 'awaiting' }] : [];
      });
      if (woken.length === 0) continue;
      for (const reply of await mode.turn(woken, room, message)) pending.push(add(reply.agent, 'agent', reply.text));
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const figures = { calls: fake.requests.length, ...totals, prefixShare: repeatedPrefixShare(fake.requests), seconds };
  (await import('node:fs')).writeFileSync(
    `/tmp/${make.length}-${figures.calls}.json`,
    JSON.stringify(fake.requests.map((r) => ({ messages: r.messages, tools: r.tools }))),
  );
  await fake.close();
  return figures;
}

const n = (value: number) => value.toLocaleString('en-US');
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

console.log(
  `Tokens: a scripted room (5 agents, 2 \`always\`; ${HUMAN_MESSAGES} human messages, every other one mentioning a ` +
    'mention-only agent), played once per layout against the fake endpoint with OpenAI-like usage',
);
const results: Array<{ name: string; figures: Figures }> = [];
for (const mode of MODES) results.push({ name: mode.name, figures: await play(mode.make) });
console.log(
  `  ${'layout'.padEnd(16)} ${'calls'.padStart(6)} ${'input'.padStart(10)} ${'cached'.padStart(10)} ${'uncached'.padStart(10)} ${'cached %'.padStart(9)} ${'prefix %'.padStart(9)} ${'wall'.padStart(8)}`,
);
for (const { name, figures: f } of results) {
  console.log(
    `  ${name.padEnd(16)} ${String(f.calls).padStart(6)} ${n(f.input).padStart(10)} ${n(f.cached).padStart(10)} ${n(f.input - f.cached).padStart(10)} ${pct(f.cached / f.input).padStart(9)} ${pct(f.prefixShare).padStart(9)} ${`${f.seconds.toFixed(2)} s`.padStart(8)}`,
  );
}
const [baseline, ...others] = results;
if (baseline) {
  for (const { name, figures: f } of others) {
    const b = baseline.figures;
    console.log(
      `  ratio ${name}/${baseline.name}: input ${(f.input / b.input).toFixed(2)}, uncached input ` +
        `${((f.input - f.cached) / (b.input - b.cached)).toFixed(2)}, cached share ${pct(b.cached / b.input)} -> ` +
        `${pct(f.cached / f.input)}, prefix share ${pct(b.prefixShare)} -> ${pct(f.prefixShare)} (goal: at least 80%)`,
    );
  }
}
