/**
 * The token economy: one scripted room played once per context layout against a fake endpoint that reports
 * usage like OpenAI (real o200k counts; cached tokens by OpenAI's rule: the longest prefix shared with an earlier
 * request, from 1024 tokens on, in steps of 128). Prints per layout the calls, input / cached / uncached tokens,
 * the share of input characters that repeats an earlier request's prefix, and wall time, then the ratios.
 * Goal: with the cache-friendly layout, at least 80% of the input characters repeat an earlier request's prefix.
 * The room carries what the context marks as data (quotes, uploads' lines, command runs), so the figures include
 * the untrusted blocks' cost and show that their ids keep the prefix.
 *   npm run bench -- tokens [--smoke]   (a smoke run plays 6 human messages instead of 20)
 *
 * A layout is one entry in MODES: given the agents a message wakes, it makes their calls. `batched` is seed 004's
 * batched turns as BATCHING=on makes them: the observers of a message in one structured call (the bridge's own
 * request and validation, src/llm/batch-call.ts), the agents asked by name one call each.
 */
import type { AgentConfig } from '../src/config/index.js';
import { runAgentTurn } from '../src/llm/agent-turn.js';
import { batchRoster, callBatch, prepareBatch } from '../src/llm/batch-call.js';
import {
  type ChatCompletionMessageParam,
  createOpenAiClient,
  type LlmClient,
  type LlmUsage,
} from '../src/llm/client.js';
import { renderingCount, renderMessage } from '../src/llm/context.js';
import { widestBlock } from '../src/llm/history-window.js';
import { renderSituation } from '../src/llm/situation.js';
import { BlockSummaries, SUMMARY_INSTRUCTIONS } from '../src/llm/summaries.js';
import { type ContextSources, turnContext } from '../src/llm/turn-context.js';
import { silentLogger } from '../src/log.js';
import type { Situation } from '../src/room/effects.js';
import type { RoomMessage } from '../src/room/types.js';
import { costOf } from '../src/spend/meter.js';
import { NANO_PER_USD } from '../src/spend/money.js';
import type { BlockSummary, SummaryPort } from '../src/store/port.js';
import { toolsFor } from '../src/tools/registry.js';
import type { ToolContext } from '../src/tools/tool.js';
import { FakeSandbox } from '../test/fakes/fake-sandbox.js';
import {
  batchAgentsOf,
  batchParts,
  type FakeOpenAI,
  type FakeReply,
  type RecordedRequest,
  repeatedPrefixShare,
  startFakeOpenAI,
} from '../test/fakes/openai-server/index.js';
import { testConfig } from '../test/helpers/config.js';
import { reportGoal } from './lib/goals.js';
import { sized } from './lib/mode.js';
import { turnHistory } from './lib/turn-history.js';

const HUMAN_MESSAGES = sized(20, 6);

const persona = (role: string, habits: string[]) =>
  [
    `You are the team's ${role}.`,
    ...habits,
    'Keep answers short: a few sentences, numbers where you have them, no greetings and no sign-offs.',
    'When another agent already said what you would say, reply with exactly [pass].',
    'Never invent data: say what you would need to check, and how.',
  ].join(' ');

// One model for the room, as batching needs (it batches agents of the same endpoint and model only).
const MODEL = 'gpt-4o-mini';
/** What the bench's model costs (OpenAI's list price for gpt-4o-mini, USD per million tokens). */
const PRICE = { input: 0.15, cached: 0.075, output: 0.6 };
const config = testConfig({
  agents: [
    {
      name: 'ana',
      model: MODEL,
      price: PRICE,
      activation: 'always',
      systemPrompt: persona('planner', [
        'You turn the discussion into a plan with owners and dates.',
        'You track decisions and open questions, and you restate them when the room drifts.',
        'You prefer small, reversible steps and say what would make you change the plan.',
      ]),
    },
    {
      name: 'ben',
      model: MODEL,
      price: PRICE,
      activation: 'always',
      systemPrompt: persona('critic', [
        'You look for the weakest assumption in every proposal and name it plainly.',
        'You ask for evidence before agreeing, and you say which evidence would convince you.',
        'You are fair: when a proposal holds up, you say so in one line.',
      ]),
    },
    {
      name: 'cy',
      model: MODEL,
      price: PRICE,
      tools: ['bash', 'read_files', 'write_files'],
      systemPrompt: persona('engineer', ['You estimate effort in days and name the riskiest part of the work.']),
    },
    {
      name: 'dee',
      model: MODEL,
      price: PRICE,
      tools: ['bash', 'read_files', 'write_files'],
      systemPrompt: persona('data analyst', ['You answer with figures from the data and say how you got them.']),
    },
    {
      name: 'eve',
      model: MODEL,
      price: PRICE,
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

/**
 * What reaches the room from outside its people, as a real room has it (the context marks it as data): every fourth
 * human message forwards a quote, every fifth carries an upload, and the agents with tools ran a command for each reply.
 */
function humanExtras(i: number): Pick<RoomMessage, 'content' | 'files'> {
  const quote = i % 4 === 1 ? `\n> vendor: the invoice for ${TOPICS[i % TOPICS.length]} is due on day ${i + 3}.` : '';
  const files = i % 5 === 2 ? { files: [`[file: uploads/figures-${i + 1}.csv (text/csv, 1.${i} KB)]`] } : {};
  return { content: `${humanMessage(i)}${quote}`, ...files };
}

function toolRunsOf(agent: string, n: number): RoomMessage['toolRuns'] {
  if (!agents.some((a) => a.name === agent && a.tools.includes('bash'))) return [];
  return [{ tool: 'bash', input: `wc -l data/week-${n}.csv`, output: `${1200 + n * 7} data/week-${n}.csv` }];
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
type MakeMode = (client: LlmClient, onUsage: OnUsage, rounds: { batched: number }) => Mode;

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

/** The bridge's own context for one agent's turn (the token economy's cache-friendly layout). */
const ownContext = (
  agent: AgentConfig,
  room: readonly RoomMessage[],
  situation: string,
  sources?: ContextSources | undefined,
) =>
  turnContext({
    sources,
    agent,
    agentNames: agents.map((a) => a.name),
    place: { room: 'bench:room', audience: null },
    roomId: 1,
    // The bridge passes a window of the newest messages (HISTORY_LIMIT + 1, at least 64).
    history: room.slice(-Math.max(config.settings.HISTORY_LIMIT + 1, 64)),
    situation,
    tools: toolsFor(agent.tools),
    settings: config.settings,
  });

/**
 * BATCHING=on: the agents asked by name answer one at a time; the observers of the message (two or more) are asked
 * in one batched call and their answers applied in order (a pass is skipped, the first reply ends the round,
 * [tools] or an unusable answer means a call of its own). The heartbeat's wait is left out: see the note printed.
 */
function batched(client: LlmClient, onUsage: OnUsage, rounds: { batched: number }): Mode {
  const alone = oneCallPerAgent('batched', client, onUsage, ownContext);
  return {
    name: 'batched',
    async turn(woken, room, message) {
      const asked = woken.filter((w) => w.asked);
      const observers = woken.filter((w) => !w.asked).map((w) => w.agent);
      const replies = asked.length > 0 ? await alone.turn(asked, room, message) : [];
      if (observers.length < 2)
        return [
          ...replies,
          ...(await alone.turn(
            woken.filter((w) => !w.asked),
            room,
            message,
          )),
        ];
      rounds.batched++;
      const prepared = await prepareBatch({
        members: observers.map((agent) => ({ agent, situation: situationFor(agent, false, message) })),
        roster: batchRoster(agents, observers[0] as AgentConfig),
        agentNames: agents.map((a) => a.name),
        history: room.slice(-Math.max(config.settings.HISTORY_LIMIT + 1, 64)),
        place: { room: 'bench:room', audience: null },
        roomId: 1,
        settings: config.settings,
      });
      const answer = await callBatch({
        client,
        model: MODEL,
        transcript: prepared.transcript,
        seats: prepared.seats,
        agents: prepared.members.map((m) => m.segment),
        sharedTokens: prepared.sharedTokens,
        segmentTokens: prepared.members.map((m) => m.tokens),
        onUsage: (_agent, usage) => onUsage(usage),
      });
      for (const agent of observers) {
        const reply = answer.ok ? answer.replies.get(agent.name) : undefined;
        if (reply?.kind === 'pass') continue;
        if (reply?.kind === 'reply') return [...replies, { agent: agent.name, text: reply.text }];
        const own = await alone.turn([{ agent, asked: false }], room, message);
        if (own.length > 0) return [...replies, ...own];
      }
      return replies;
    },
  };
}

/**
 * A layout, and where the endpoint puts a structured output's schema: OpenAI makes it a prefix of the prompt (a
 * batch of other agents has another schema, and misses the cache); servers that enforce it with a grammar
 * (llama.cpp, vLLM, Ollama) leave it out of the prompt.
 */
/** A summary store in memory over the bench's room (the bridge keeps them in SQLite: src/store/sqlite/summaries.ts). */
function memorySummaries(room: () => readonly RoomMessage[]): SummaryPort {
  const stored = new Map<number, BlockSummary>();
  return {
    before: async (_room, width, before) =>
      [...stored.values()]
        .filter((b) => b.width === width && b.firstId + width <= before)
        .sort((a, b) => a.firstId - b.firstId),
    put: async (_room, summary) => {
      if (stored.has(summary.firstId)) return false;
      stored.set(summary.firstId, summary);
      return true;
    },
    block: async (_room, from, to) => room().filter((m) => m.id >= from && m.id < to),
  };
}

/** One call per agent with SUMMARY_MODEL set: the blocks that leave the window are summarised (calls counted). */
function withSummaries(client: LlmClient, onUsage: OnUsage): Mode {
  let current: readonly RoomMessage[] = [];
  const summaries = new BlockSummaries({
    store: memorySummaries(() => current),
    client: {
      complete: async (request) => {
        const response = await client.complete(request);
        if (response.usage) onUsage(response.usage);
        return response;
      },
    },
    model: MODEL,
    width: widestBlock(config.settings.HISTORY_LIMIT),
    log: silentLogger(),
    clock: Date.now,
  });
  const sources: ContextSources = { summaries: (room) => summaries.source(room) };
  const mode = oneCallPerAgent('summaries', client, onUsage, (agent, room, situation) =>
    ownContext(agent, room, situation, sources),
  );
  return {
    name: 'summaries',
    turn(woken, room, message) {
      current = room;
      return mode.turn(woken, room, message);
    },
  };
}

const MODES: ReadonlyArray<{ name: string; make: MakeMode; schema?: 'prefix' | 'grammar' }> = [
  {
    name: 'old layout',
    make: (client, onUsage) =>
      oneCallPerAgent('old layout', client, onUsage, async (agent, room, situation) => ({
        messages: oldLayout(agent, room, situation),
      })),
  },
  {
    name: 'cache-friendly',
    make: (client, onUsage) => oneCallPerAgent('cache-friendly', client, onUsage, ownContext),
  },
  { name: 'summaries', make: (client, onUsage) => withSummaries(client, onUsage) },
  { name: 'batched', make: (client, onUsage, rounds) => batched(client, onUsage, rounds) },
  { name: 'batched, grammar', make: (client, onUsage, rounds) => batched(client, onUsage, rounds), schema: 'grammar' },
];

interface Figures {
  calls: number;
  input: number;
  cached: number;
  output: number;
  prefixShare: number;
  seconds: number;
  /** Rounds whose observers were asked in one batched call. */
  batchedRounds: number;
  /** Whether the room's last agent request still shows the first human message's fact (itself or its summary). */
  factReached: boolean;
}

/** The fact of the first human message, which leaves the window long before the room's end. */
const FACT = 'this week. (1)';

/** Each agent answers once after a human message (in its own words), and passes after that. */
function scriptedModel(): (request: RecordedRequest) => FakeReply {
  let replies = 0;
  // Newest first: the agent's own message means it already answered; a human's is what it answers.
  const answer = (agent: string, messages: ReadonlyArray<{ own: boolean; text: string }>) => {
    for (const m of [...messages].reverse()) {
      if (m.own) return '[pass]';
      if (m.text.startsWith('[@user]: ')) return agentReply(agent, m.text.slice(9), ++replies);
    }
    return '[pass]';
  };
  return (request) => {
    if (request.messages[0]?.content === SUMMARY_INSTRUCTIONS) {
      // The summariser keeps what each human asked, with its closing words.
      const asked = String(request.messages[1]?.content)
        .split('\n')
        .filter((line) => line.startsWith('[@user]: '))
        .map((line) => `@user: ${line.slice(9, 40)}… ${line.slice(-14)}`);
      return { content: `Asked: ${asked.join('; ') || 'nothing'}. The agents answered with the usual figures.` };
    }
    const names = batchAgentsOf(request);
    if (names) {
      const lines = batchParts(request).transcript.split('\n');
      const each = names.map((name) => [
        name,
        answer(
          name,
          lines.map((text) => ({ own: text.startsWith(`[@${name}]: `), text })),
        ),
      ]);
      return { agents: Object.fromEntries(each) };
    }
    const system = String(request.messages[0]?.content);
    const agent = /You are @([a-z]+) in a shared chat room/.exec(system)?.[1] ?? '?';
    return {
      content: answer(
        agent,
        request.messages.map((m) => ({ own: m.role === 'assistant', text: String(m.content) })),
      ),
    };
  };
}

/**
 * Whom a message wakes, as the room's rules have it for this room (no requests, no privacy): the agents a human names
 * (asked, in the order named), then, in configured order, every other `always` agent and every agent an agent's
 * message names (observers: reasons `always` and `mentioned`), never the author. The replies quote the human's
 * message, so they name the agent the human asked: a mention-only agent then observes too, and batches have
 * different members from round to round.
 */
function wakes(room: readonly AgentConfig[], message: RoomMessage): Array<{ agent: AgentConfig; asked: boolean }> {
  const named = message.kind === 'human' ? message.mentions : [];
  const asked = named.flatMap((name) => room.filter((a) => a.name === name).map((agent) => ({ agent, asked: true })));
  const observers = room
    .filter(
      (a) =>
        (a.activation === 'always' || message.mentions.includes(a.name)) &&
        a.name !== message.author &&
        !named.includes(a.name),
    )
    .map((agent) => ({ agent, asked: false }));
  return [...asked, ...observers];
}

async function play(make: MakeMode, schema: 'prefix' | 'grammar' = 'prefix'): Promise<Figures> {
  const fake: FakeOpenAI = await startFakeOpenAI({ usage: 'openai', schema });
  fake.respond(scriptedModel());
  const client = createOpenAiClient({
    baseURL: fake.baseURL,
    apiKey: 'bench',
    timeoutMs: 60_000,
    maxRetries: 0,
    stream: false,
  });
  // Usage as the client read it from each answer (what the bridge stores for /status).
  const totals = { input: 0, cached: 0, output: 0 };
  const rounds = { batched: 0 };
  const mode = make(
    client,
    (usage) => {
      totals.input += usage.input;
      totals.cached += usage.cached;
      totals.output += usage.output;
    },
    rounds,
  );
  const room: RoomMessage[] = [];
  let id = 0;
  const add = (
    author: string,
    kind: RoomMessage['kind'],
    content: string,
    extra: Partial<Pick<RoomMessage, 'files' | 'toolRuns'>> = {},
  ) => {
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
      ...extra,
      at: id * 1000,
    };
    // Counted once, as the bridge's window counts a message the first time a turn reads it.
    const counted = { ...message, tokens: { o200k_base: renderingCount(message, 'o200k_base') } };
    room.push(counted);
    return counted;
  };
  const started = process.hrtime.bigint();
  for (let i = 0; i < HUMAN_MESSAGES; i++) {
    // Routing as the bridge does it: whoever a message wakes (router rules) is asked; a reply is posted and
    // routed in turn, until nobody answers (bounded by the turn limit).
    const { content, ...files } = humanExtras(i);
    const pending = [add('user', 'human', content, files)];
    for (let turns = 0; turns < config.settings.TURN_LIMIT; turns++) {
      const message = pending.shift();
      if (!message) break;
      const woken = wakes(agents, message);
      if (woken.length === 0) continue;
      for (const reply of await mode.turn(woken, room, message)) {
        pending.push(add(reply.agent, 'agent', reply.text, { toolRuns: toolRunsOf(reply.agent, id) }));
      }
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const prefixShare = repeatedPrefixShare(fake.requests, schema);
  const last = [...fake.requests].reverse().find((r) => r.messages[0]?.content !== SUMMARY_INSTRUCTIONS);
  const factReached = JSON.stringify(last?.messages ?? []).includes(FACT);
  const figures = {
    calls: fake.requests.length,
    ...totals,
    prefixShare,
    seconds,
    batchedRounds: rounds.batched,
    factReached,
  };
  await fake.close();
  return figures;
}

const n = (value: number) => value.toLocaleString('en-US');
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
/** What a run's usage costs at the bench's price, in US dollars. */
const usd = (f: Figures) => costOf(f, PRICE) / NANO_PER_USD;

console.log(
  `Tokens: a scripted room (5 agents, 2 \`always\`; ${HUMAN_MESSAGES} human messages, every other one mentioning a ` +
    'mention-only agent), played once per layout against the fake endpoint with OpenAI-like usage',
);
const results: Array<{ name: string; figures: Figures }> = [];
for (const mode of MODES) results.push({ name: mode.name, figures: await play(mode.make, mode.schema) });
console.log(
  `  ${'layout'.padEnd(17)} ${'calls'.padStart(6)} ${'input'.padStart(10)} ${'cached'.padStart(10)} ${'uncached'.padStart(10)} ${'output'.padStart(8)} ${'cached %'.padStart(9)} ${'prefix %'.padStart(9)} ${'cost $'.padStart(8)} ${'wall'.padStart(8)}`,
);
for (const { name, figures: f } of results) {
  console.log(
    `  ${name.padEnd(17)} ${String(f.calls).padStart(6)} ${n(f.input).padStart(10)} ${n(f.cached).padStart(10)} ${n(f.input - f.cached).padStart(10)} ${n(f.output).padStart(8)} ${pct(f.cached / f.input).padStart(9)} ${pct(f.prefixShare).padStart(9)} ${usd(f).toFixed(4).padStart(8)} ${`${f.seconds.toFixed(2)} s`.padStart(8)}`,
  );
}
const ratio = (name: string, baseline: string, goal = '') => {
  const f = results.find((r) => r.name === name)?.figures;
  const b = results.find((r) => r.name === baseline)?.figures;
  if (!f || !b) return;
  console.log(
    `  ratio ${name}/${baseline}: calls ${(f.calls / b.calls).toFixed(2)}, input ${(f.input / b.input).toFixed(2)}, ` +
      `uncached input ${((f.input - f.cached) / (b.input - b.cached)).toFixed(2)}, output ` +
      `${(f.output / b.output).toFixed(2)}, cached share ` +
      `${pct(b.cached / b.input)} -> ${pct(f.cached / f.input)}, prefix share ${pct(b.prefixShare)} -> ` +
      `${pct(f.prefixShare)}, cost ${(usd(f) / usd(b)).toFixed(2)}${goal}`,
  );
};
ratio('cache-friendly', 'old layout');
// Summaries: the same calls, and one per block that leaves the window.
ratio('summaries', 'cache-friendly');
for (const name of ['cache-friendly', 'summaries']) {
  const f = results.find((r) => r.name === name)?.figures;
  console.log(
    `  ${name}: the first human message's fact ("${FACT}") ${f?.factReached ? 'still reaches' : 'no longer reaches'} the agents at the room's end`,
  );
}
// Batching alone: the same layout of each agent's own calls, with and without batched observers.
ratio('batched', 'cache-friendly', ' (seed 004 expects about 0.78 input at 5 agents)');
ratio('batched, grammar', 'cache-friendly');
const batchedRounds = results.find((r) => r.name === 'batched')?.figures.batchedRounds ?? 0;
console.log(
  `  batched: ${batchedRounds} rounds asked their observers in one call; in the bridge each of those waits for the ` +
    'BATCH_TICK_MS heartbeat (on average half of it), which the wall time above leaves out',
);
console.log(
  `  priced as ${MODEL} ($${PRICE.input} uncached input, $${PRICE.cached} cached input, $${PRICE.output} output per ` +
    'million tokens)',
);
const cacheFriendly = results.find((r) => r.name === 'cache-friendly')?.figures;
if (!cacheFriendly) throw new Error('the cache-friendly layout was not played');
for (const name of ['batched', 'batched, grammar']) {
  const f = results.find((r) => r.name === name)?.figures;
  if (!f) throw new Error(`the ${name} layout was not played`);
  const uncached = (f.input - f.cached) / (cacheFriendly.input - cacheFriendly.cached);
  const calls = f.calls / cacheFriendly.calls;
  reportGoal({
    figure: `tokens: ${name} takes ${uncached.toFixed(2)}x the uncached input and ${calls.toFixed(2)}x the calls of one call per agent`,
    goal: '<= 1.0x uncached input with <= 0.75x the calls',
    met: uncached <= 1 && calls <= 0.75,
    how: `the scripted room played both ways (${HUMAN_MESSAGES} human messages), cached tokens by the fake's OpenAI rule`,
  });
}
reportGoal({
  figure: `tokens: ${pct(cacheFriendly.prefixShare)} of the cache-friendly layout's input repeats an earlier prefix`,
  goal: '>= 80%',
  met: cacheFriendly.prefixShare >= 0.8,
  how: `input characters shared with an earlier request's prefix, over ${cacheFriendly.calls} calls of the scripted room (${HUMAN_MESSAGES} human messages)`,
});

// What a turn's history costs the bridge itself: the room's window with kept counts beside a store read and counting.
const WINDOW = 64;
const history = await turnHistory(WINDOW, sized(500, 50), sized(7, 3));
console.log(
  `Turn history: a room of ${WINDOW} messages, a turn after each new one (the store read or the window, then the ` +
    'context built)',
);
console.log(`  store read, every message counted again   ${history.before.toFixed(3)} ms per turn`);
console.log(`  window in memory, counts kept             ${history.after.toFixed(3)} ms per turn`);
console.log(
  `  ratio window/store read: ${(history.after / history.before).toFixed(2)} (medians of alternating rounds)`,
);
