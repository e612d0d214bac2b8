/**
 * Two bridges (replicas a and b) as real processes on one Postgres database, connected to the Discord and the Slack
 * fakes (Slack's Socket Mode round-robin, resending what was not acknowledged within 2 s), with the `code` agent
 * answering when mentioned, for the fault and soak tests. The model answers every question of the room its agent has
 * not answered yet (`re: d0-3 d0-4 by a`), so a question is answered once whether it is taken alone or with others
 * stored beside it after a fault, and the tally says which question was answered how often, by which replica, when.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type FakeChannel, type FakeHuman, type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { type BridgeChild, startBridgeChild } from './bridge-child.js';
import { roomMessagesOf } from './harness.js';

/** A question's marker: the room (`d0`, `s1`, `w0`) and its number there. */
const MARKER = /\b([dsw]\d+-\d+)\b/g;

/** The lines a room sees while its store cannot write (docs/reliability.md): posted straight to the platform. */
export const OUTAGE_LINES = [/^The bridge cannot save messages right now/, /^The bridge can save messages again/];

export interface Asked {
  readonly marker: string;
  readonly room: string;
  readonly at: number;
}

export interface Answer {
  readonly markers: string[];
  readonly room: string;
  readonly by: string;
  readonly at: number;
}

/** A small seeded generator (mulberry32). */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Writes `code`, the control bot on Discord and Slack, answering when mentioned; returns the agents folder. */
function writeAgent(dir: string): string {
  const agents = path.join(dir, 'agents');
  mkdirSync(agents, { recursive: true });
  const card = ['---', 'name: code', 'model: fake', 'activation: mention', 'tools: []'];
  card.push('discord: { token_env: DISCORD_TOKEN_CODE, control: true }');
  card.push('slack: { bot_token_env: SLACK_BOT_TOKEN_CODE, app_token_env: SLACK_APP_TOKEN_CODE, control: true }');
  card.push('---', 'You answer questions.');
  writeFileSync(path.join(agents, 'code.md'), card.join('\n'));
  return agents;
}

export interface ReplicaPair {
  readonly discord: FakeDiscord;
  readonly slack: FakeSlack;
  readonly llm: FakeOpenAI;
  readonly rooms: readonly string[];
  readonly asked: Asked[];
  readonly children: Map<string, BridgeChild>;
  /** Starts (or starts again, same REPLICA_ID and DATA_DIR) a replica; throws with its stderr when it does not. */
  start(replica: string): Promise<void>;
  /** SIGKILL, or a clean stop with SIGTERM. */
  stop(replica: string, signal?: NodeJS.Signals): Promise<void>;
  /** Posts a question in a Discord or Slack room (`d…`, `s…`); returns its marker. */
  ask(room: string): string;
  /** Adds a question of another platform (the web room) to the tally. */
  record(asked: Asked): void;
  /** Every agent answer on Discord and Slack, and the other posts (outage lines excepted). */
  answers(): { answers: Answer[]; other: string[] };
  /** How often each marker was answered so far (`extra`: answers seen elsewhere, the web room). */
  answeredCount(extra?: Answer[]): Map<string, number>;
  /** Polls `predicate`; fails at once, with its stderr, when a replica that should run has exited. */
  within(ms: number, what: string, predicate: () => boolean | Promise<boolean>): Promise<void>;
  close(): Promise<void>;
}

export async function startReplicaPair(options: {
  dir: string;
  /** DATABASE_URL for each replica. */
  databaseUrl: (replica: string) => string;
  discordRooms: number;
  slackRooms: number;
  leaseS: number;
  /** Where each replica reaches Discord's and Slack's APIs (default: the fakes directly). */
  apis?: (replica: string) => { discord: string; slack: string };
  env?: (replica: string) => NodeJS.ProcessEnv;
  keepLogs?: boolean;
}): Promise<ReplicaPair> {
  const { dir } = options;
  const discordRooms = Array.from({ length: options.discordRooms }, (_, i) => `d${i}`);
  const slackRooms = Array.from({ length: options.slackRooms }, (_, i) => `s${i}`);
  const discord = await startFakeDiscord({ bots: [{ token: 'tok-code', name: 'code-bot' }], channels: discordRooms });
  const slack = await startFakeSlack();
  slack.socketMode({ choice: 'round-robin', redeliverAfterMs: 2_000 });
  const app = slack.addApp('code');
  const alice: FakeHuman = slack.addHuman('alice', 'Alice');
  const slackChannels = new Map<string, FakeChannel>(
    slackRooms.map((name) => [name, slack.addChannel(name, [alice, app])]),
  );
  const bot = discord.bot('code-bot');
  const llm = await startFakeOpenAI();
  llm.respond((request, index) => {
    const asked: string[] = [];
    const answered = new Set<string>();
    for (const m of roomMessagesOf(request)) {
      const markers = [...String(m.content).matchAll(MARKER)].map((match) => match[1] ?? '');
      if (m.role === 'user' && /question /.test(String(m.content))) asked.push(...markers);
      else if (m.role !== 'user') for (const marker of markers) answered.add(marker);
    }
    const open = [...new Set(asked)].filter((marker) => !answered.has(marker));
    const replica = /key-(\w+)/.exec(request.headers.authorization ?? '')?.[1] ?? '?';
    return { content: `re: ${open.join(' ') || 'none'} by ${replica}`, delayMs: 200 + ((index * 7919) % 400) };
  });

  const agents = writeAgent(dir);
  const envOf = (replica: string): NodeJS.ProcessEnv => {
    const apis = options.apis?.(replica) ?? { discord: discord.apiURL, slack: slack.apiUrl };
    return {
      PATH: process.env.PATH ?? '',
      ROUNDTABLE_CWD: dir,
      AGENTS_DIR: agents,
      DATA_DIR: path.join(dir, `data-${replica}`),
      LOG_FILE: path.join(dir, `bridge-${replica}.log`),
      LOG_LEVEL: options.keepLogs ? 'debug' : 'info',
      DATABASE_URL: options.databaseUrl(replica),
      REPLICA_ID: replica,
      ROOM_LEASE_S: String(options.leaseS),
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: `key-${replica}`,
      LLM_MAX_RETRIES: '0',
      LLM_TIMEOUT_S: '20',
      DISCORD_API_URL: apis.discord,
      DISCORD_TOKEN_CODE: 'tok-code',
      SLACK_API_URL: apis.slack,
      SLACK_BOT_TOKEN_CODE: app.botToken,
      SLACK_APP_TOKEN_CODE: app.appToken,
      SLACK_REPLY_IN_THREAD: 'false',
      ...options.env?.(replica),
    };
  };
  const children = new Map<string, BridgeChild>();
  const everStarted: BridgeChild[] = [];
  const roomOfChannel = new Map<string, string>([
    ...discordRooms.map((name): [string, string] => [discord.channel(name).id, name]),
    ...slackRooms.map((name): [string, string] => [slackChannels.get(name)?.id ?? '', name]),
  ]);
  const asked: Asked[] = [];
  const counters = new Map<string, number>();
  const answers = () => {
    const found: Answer[] = [];
    const other: string[] = [];
    const add = (text: string, channel: string, at: number) => {
      const room = roomOfChannel.get(channel) ?? channel;
      const match = /^re: (.+) by (\w+)$/.exec(text.trim());
      if (match) {
        const markers = (match[1] ?? '').split(' ').filter((marker) => marker !== 'none');
        found.push({ markers, by: match[2] ?? '', room, at });
      } else if (!OUTAGE_LINES.some((line) => line.test(text.trim()))) other.push(`${room}: ${text}`);
    };
    for (const name of discordRooms)
      for (const m of discord.botMessages(name)) add(m.content, m.channelId, m.createdAt);
    for (const m of slack.posts()) add(m.text, m.channel, Number(m.ts) * 1000);
    return { answers: found, other };
  };
  const pair: ReplicaPair = {
    discord,
    slack,
    llm,
    rooms: [...discordRooms, ...slackRooms],
    asked,
    children,
    start: async (replica) => {
      const child = startBridgeChild(envOf(replica));
      children.set(replica, child);
      everStarted.push(child);
      if (!(await child.ready)) throw new Error(`replica ${replica} did not start: ${child.stderr()}`);
    },
    stop: async (replica, signal = 'SIGKILL') => {
      await children.get(replica)?.stop(signal);
      children.delete(replica);
    },
    ask: (room) => {
      const n = (counters.get(room) ?? 0) + 1;
      counters.set(room, n);
      const marker = `${room}-${n}`;
      asked.push({ marker, room, at: Date.now() });
      if (room.startsWith('d')) discord.humanSays(room, 'alice', `<@${bot.id}> question ${marker}`);
      else {
        const channel = slackChannels.get(room);
        if (channel) slack.say(alice, channel, `<@${app.botUserId}> question ${marker}`);
      }
      return marker;
    },
    record: (question) => void asked.push(question),
    answers,
    answeredCount: (extra = []) => {
      const count = new Map<string, number>();
      for (const answer of [...answers().answers, ...extra])
        for (const marker of answer.markers) count.set(marker, (count.get(marker) ?? 0) + 1);
      return count;
    },
    within: async (ms, what, predicate) => {
      const deadline = Date.now() + ms;
      while (!(await predicate())) {
        for (const [replica, child] of children)
          if (child.exited())
            throw new Error(`replica ${replica} exited while waiting for ${what}:\n${child.stderr()}`);
        if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
        await sleep(50);
      }
    },
    close: async () => {
      for (const child of everStarted) await child.stop('SIGKILL');
      await llm.close();
      await discord.close();
      await slack.close();
    },
  };
  return pair;
}

/** What a tally found: questions never answered, answered more than once, and answers to nothing asked. */
export function tally(
  asked: readonly Asked[],
  answers: readonly Answer[],
): { unanswered: string[]; doubled: string[]; unasked: string[]; worstMs: number; worst: string } {
  const first = new Map<string, number>();
  const count = new Map<string, number>();
  for (const answer of answers)
    for (const marker of answer.markers) {
      count.set(marker, (count.get(marker) ?? 0) + 1);
      first.set(marker, Math.min(first.get(marker) ?? Number.POSITIVE_INFINITY, answer.at));
    }
  const known = new Set(asked.map((q) => q.marker));
  let worstMs = 0;
  let worst = '';
  for (const q of asked) {
    const ms = (first.get(q.marker) ?? Number.POSITIVE_INFINITY) - q.at;
    if (ms > worstMs) [worstMs, worst] = [ms, q.marker];
  }
  return {
    unanswered: asked.filter((q) => !count.has(q.marker)).map((q) => q.marker),
    doubled: [...count].filter(([, n]) => n > 1).map(([marker]) => marker),
    unasked: [...count.keys()].filter((marker) => !known.has(marker)),
    worstMs,
    worst,
  };
}
