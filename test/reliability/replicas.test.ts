/**
 * Two bridges (replicas a and b) as real processes on one Postgres store, connected to the Discord and the Slack
 * fakes, 20 rooms in conversation, ROOM_LEASE_S=5. The replica holding most rooms is killed (SIGKILL) at a seeded
 * random point and started again 10 s later, then the other is killed; later a replica holding rooms is paused
 * (SIGSTOP) past its lease and resumed. Every human message is answered exactly once, within ROOM_LEASE_S + 10 s of
 * being posted, and the resumed replica posts nothing it was doing when it was paused.
 *
 * Discord gives every event to every session of a bot; Slack's Socket Mode gives each to one connection of the app
 * (in turn here) and sends again what was not acknowledged within 2 s or was left on a connection that closed.
 * A throw-away cluster for this file; outside CI, without Postgres, one line and skipped. REPLICAS_TEST_LOG=1 keeps
 * the replicas' debug logs and prints where.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { type FakeOpenAI, type RecordedRequest, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { type BridgeChild, startBridgeChild, writeAnsweringAgent } from '../helpers/bridge-child.js';
import { roomMessagesOf } from '../helpers/harness.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';
import { type ProxiedRequest, type RecordingProxy, startRecordingProxy } from '../helpers/recording-proxy.js';

const LEASE_S = 5;
/** The requirement: each answer within the lease plus 10 s of its question. */
const ANSWER_WITHIN_MS = (LEASE_S + 10) * 1000;
const SEED = 20_261_126;
const ROOMS_PER_PLATFORM = 10;
const PAUSE_MS = 8_500;
const KEEP = Boolean(process.env.REPLICAS_TEST_LOG);

/** A small seeded generator (mulberry32): the same timings on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Polls `predicate` until it holds; fails naming `what` after `ms`. */
async function within(ms: number, what: string, predicate: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** The question a model request answers: the newest human line with a marker (`question d3-7`). */
const questionOf = (request: RecordedRequest) =>
  [...roomMessagesOf(request)]
    .reverse()
    .filter((m) => m.role === 'user')
    .map((m) => /question ([ds]\d+-\d+)/.exec(String(m.content))?.[1])
    .find(Boolean);

interface Asked {
  readonly marker: string;
  readonly room: string;
  readonly at: number;
}

interface Answer {
  readonly marker: string;
  readonly room: string;
  /** The replica whose model call wrote it. */
  readonly by: string;
  readonly at: number;
}

interface ModelCall {
  readonly marker: string;
  readonly replica: string;
  readonly at: number;
  /** When its answer is sent. */
  readonly answersAt: number;
}

/** The text of a message a bridge posted through its proxy (Discord's REST, Slack's chat.postMessage). */
function postedText(request: ProxiedRequest): string | undefined {
  if (request.method !== 'POST') return undefined;
  if (request.route === '/discord' && /\/channels\/\d+\/messages$/.test(request.path)) {
    try {
      return String((JSON.parse(request.body) as { content?: unknown }).content ?? '');
    } catch {
      return request.body;
    }
  }
  if (request.route === '/slack' && request.path.endsWith('/chat.postMessage'))
    return new URLSearchParams(request.body).get('text') ?? request.body;
  return undefined;
}

const pgSuite = migratedPostgres();

describe.runIf(pgSuite.plan.run)('replicas as real processes (SIGKILL, SIGSTOP/SIGCONT) on Discord and Slack', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-replicas-'));
  let discord: FakeDiscord | undefined;
  let slack: FakeSlack | undefined;
  let llm: FakeOpenAI | undefined;
  let db: pg.Client | undefined;
  let database: string | undefined;
  const children: BridgeChild[] = [];
  const proxies = new Map<string, RecordingProxy>();
  afterAll(async () => {
    for (const child of children) await child.stop('SIGKILL');
    for (const proxy of proxies.values()) await proxy.close();
    await db?.end();
    await llm?.close();
    await discord?.close();
    await slack?.close();
    if (database) await pgSuite.cluster().dropDatabase(database);
    if (KEEP) console.log(`replicas test: logs kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });

  it('answers every human message exactly once and in time through kills and a pause, and a resumed replica posts nothing stale', async () => {
    const created = await pgSuite.cluster().createDatabase({ from: pgSuite.migrated() });
    database = created.name;
    db = new pg.Client({ connectionString: created.url });
    await db.connect();

    const discordRooms = Array.from({ length: ROOMS_PER_PLATFORM }, (_, i) => `d${i}`);
    const slackRooms = Array.from({ length: ROOMS_PER_PLATFORM }, (_, i) => `s${i}`);
    discord = await startFakeDiscord({ bots: [{ token: 'tok-code', name: 'code-bot' }], channels: discordRooms });
    slack = await startFakeSlack();
    slack.socketMode({ choice: 'round-robin', redeliverAfterMs: 2_000 });
    const app = slack.addApp('code');
    const alice = slack.addHuman('alice', 'Alice');
    const slackChannels = new Map(slackRooms.map((name) => [name, slack?.addChannel(name, [alice, app])]));
    const bot = discord.bot('code-bot');

    // The model answers each question with its marker and the replica that asked (its API key), after 300-700 ms.
    llm = await startFakeOpenAI();
    const calls: ModelCall[] = [];
    llm.respond((request, index) => {
      const marker = questionOf(request) ?? 'nothing';
      const replica = /key-(\w+)/.exec(request.headers.authorization ?? '')?.[1] ?? '?';
      const delayMs = 300 + ((index * 7919) % 400);
      const at = Date.now();
      calls.push({ marker, replica, at, answersAt: at + delayMs });
      return { content: `re: ${marker} by ${replica}`, delayMs };
    });

    const agents = writeAnsweringAgent(dir);
    // Each replica reaches the platforms' APIs through its own proxy: the proxy's records say what that process sent.
    for (const replica of ['a', 'b'])
      proxies.set(
        replica,
        await startRecordingProxy({
          '/discord': new URL(discord.apiURL).origin,
          '/slack': new URL(slack.apiUrl).origin,
        }),
      );
    const proxyOf = (replica: string) => proxies.get(replica)?.url ?? '';
    const envOf = (replica: string): NodeJS.ProcessEnv => ({
      PATH: process.env.PATH ?? '',
      ROUNDTABLE_CWD: dir,
      AGENTS_DIR: agents,
      DATA_DIR: path.join(dir, `data-${replica}`),
      LOG_FILE: path.join(dir, `bridge-${replica}.log`),
      LOG_LEVEL: KEEP ? 'debug' : 'info',
      DATABASE_URL: created.url,
      REPLICA_ID: replica,
      ROOM_LEASE_S: String(LEASE_S),
      OPENAI_BASE_URL: llm?.baseURL ?? '',
      OPENAI_API_KEY: `key-${replica}`,
      LLM_MAX_RETRIES: '0',
      LLM_TIMEOUT_S: '20',
      DISCORD_API_URL: `${proxyOf(replica)}/discord/api`,
      DISCORD_TOKEN_CODE: 'tok-code',
      SLACK_API_URL: `${proxyOf(replica)}/slack/api/`,
      SLACK_BOT_TOKEN_CODE: app.botToken,
      SLACK_APP_TOKEN_CODE: app.appToken,
      SLACK_REPLY_IN_THREAD: 'false',
    });
    const running = new Map<string, BridgeChild>();
    const start = async (replica: string) => {
      const child = startBridgeChild(envOf(replica));
      children.push(child);
      running.set(replica, child);
      if (!(await child.ready)) throw new Error(`replica ${replica} did not start: ${child.stderr()}`);
    };
    const kill = async (replica: string) => running.get(replica)?.stop('SIGKILL');
    const signal = (replica: string, name: NodeJS.Signals) => running.get(replica)?.proc.kill(name);

    // What the platforms show: each agent post, by the marker of the question it answers.
    const roomOfChannel = new Map<string, string>([
      ...discordRooms.map((name): [string, string] => [discord?.channel(name).id ?? '', name]),
      ...slackRooms.map((name): [string, string] => [slackChannels.get(name)?.id ?? '', name]),
    ]);
    const otherPosts: string[] = [];
    const answers = (): Answer[] => {
      const found: Answer[] = [];
      otherPosts.length = 0;
      const add = (text: string, channel: string, at: number) => {
        const room = roomOfChannel.get(channel) ?? channel;
        const match = /^re: (\S+) by (\w+)$/.exec(text.trim());
        if (match) found.push({ marker: match[1] ?? '', by: match[2] ?? '', room, at });
        else otherPosts.push(`${room}: ${text}`);
      };
      for (const name of discordRooms)
        for (const m of discord?.botMessages(name) ?? []) add(m.content, m.channelId, m.createdAt);
      for (const m of slack?.posts() ?? []) add(m.text, m.channel, Number(m.ts) * 1000);
      return found;
    };
    const answered = new Set<string>();
    const poller = setInterval(() => {
      for (const answer of answers()) answered.add(answer.marker);
    }, 50);

    // The humans: in each room, a question; once it is answered, a pause of 1-4 s (seeded per room), the next.
    const asked: Asked[] = [];
    let posting = true;
    const say = (room: string, text: string) => {
      if (room.startsWith('d')) discord?.humanSays(room, 'alice', `<@${bot.id}> ${text}`);
      else slack?.say(alice, slackChannels.get(room) ?? slack.addChannel(room, []), `<@${app.botUserId}> ${text}`);
    };
    const converse = async (room: string, index: number) => {
      const random = seeded(SEED + index);
      await sleep(random() * 2_000);
      for (let n = 1; posting; n++) {
        const marker = `${room}-${n}`;
        asked.push({ marker, room, at: Date.now() });
        say(room, `question ${marker}`);
        // An unanswered question ends this room's part (the assertions below name it).
        const deadline = Date.now() + 3 * ANSWER_WITHIN_MS;
        while (!answered.has(marker) && Date.now() < deadline) await sleep(50);
        if (!answered.has(marker)) return;
        await sleep(1_000 + random() * 3_000);
      }
    };

    const holders = async (): Promise<Map<string, string>> => {
      const { rows } = await (db as pg.Client).query<{ holder: string; channel: string }>(
        `SELECT l.holder, c.channel FROM room_leases l JOIN channels c ON c.id = l.room_id
         WHERE l.expires_at > (extract(epoch FROM clock_timestamp()) * 1000)::bigint AND l.holder <> ''`,
      );
      return new Map(rows.map((r) => [roomOfChannel.get(r.channel) ?? r.channel, r.holder]));
    };
    const roomsOf = (held: Map<string, string>, replica: string) =>
      [...held].filter(([, holder]) => holder === replica).map(([room]) => room);
    /** When the first answer by another replica than `from` came in each room, after `since`. */
    const movedAfter = (rooms: string[], from: string, since: number) => {
      const all = answers();
      return rooms.map((room) => {
        const first = all
          .filter((a) => a.room === room && a.by !== from && a.at >= since)
          .sort((x, y) => x.at - y.at)[0];
        return first ? first.at - since : Number.POSITIVE_INFINITY;
      });
    };

    const random = seeded(SEED);
    await Promise.all([start('a'), start('b')]);
    const talks = [...discordRooms, ...slackRooms].map((room, i) => converse(room, i + 1));
    // Every room in conversation and served, by one replica or the other.
    await within(60_000, 'all 20 rooms answered once', () =>
      [...discordRooms, ...slackRooms].every((room) => answered.has(`${room}-1`)),
    );

    // Kill -9 the replica holding most rooms at a seeded random point.
    await sleep(1_000 + random() * 4_000);
    const before = await holders();
    const [first, second] = roomsOf(before, 'a').length >= roomsOf(before, 'b').length ? ['a', 'b'] : ['b', 'a'];
    const firstRooms = roomsOf(before, first);
    const firstKilledAt = Date.now();
    await kill(first);
    // Restarted (same REPLICA_ID and DATA_DIR) 10 s later.
    await sleep(10_000);
    await start(first);
    await sleep(1_000 + random() * 3_000);
    // Then the other one: the restarted replica must take its rooms.
    const secondRooms = roomsOf(await holders(), second);
    const secondKilledAt = Date.now();
    await kill(second);
    // Each of them answered by the restarted replica (they are all in conversation).
    await within(60_000, `replica ${first} answering in the rooms ${second} held`, () =>
      movedAfter(secondRooms, second, secondKilledAt).every(Number.isFinite),
    );
    const roomsMovedAt = Date.now();
    expect(
      secondRooms.filter((room) => !answers().some((a) => a.room === room && a.by === first && a.at >= secondKilledAt)),
    ).toEqual([]);
    await sleep(2_000 + random() * 2_000);

    // Pause a replica holding rooms past its lease, while one of its model calls is under way.
    await start(second);
    await within(30_000, 'a model call under way', () =>
      calls.some((c) => c.replica === first && c.answersAt - Date.now() > 150),
    );
    const pausedAt = Date.now();
    signal(first, 'SIGSTOP');
    const underWay = calls.filter((c) => c.replica === first && c.answersAt > pausedAt).map((c) => c.marker);
    // Its leases are still live in the database (for up to ROOM_LEASE_S more).
    const pausedRooms = roomsOf(await holders(), first);
    await sleep(PAUSE_MS);
    signal(first, 'SIGCONT');
    const resumedAt = Date.now();
    await sleep(5_000 + random() * 3_000);

    // The humans stop; every question is answered; both replicas stop cleanly (nothing more can be posted).
    posting = false;
    await Promise.all(talks);
    // Bounded; what is still unanswered then is named by the tally below.
    await within(3 * ANSWER_WITHIN_MS, 'every question answered', () =>
      asked.every((q) => answered.has(q.marker)),
    ).catch(() => undefined);
    for (const replica of [first, second]) await running.get(replica)?.stop('SIGTERM');
    clearInterval(poller);

    const all = answers();
    const byMarker = new Map<string, Answer[]>();
    for (const answer of all) byMarker.set(answer.marker, [...(byMarker.get(answer.marker) ?? []), answer]);
    const unanswered = asked.filter((q) => !byMarker.has(q.marker)).map((q) => q.marker);
    const doubled = [...byMarker].filter(([, list]) => list.length > 1).map(([marker]) => marker);
    const unasked = all.filter((a) => !asked.some((q) => q.marker === a.marker)).map((a) => a.marker);
    const delays = asked.map((q) => ({ marker: q.marker, ms: (byMarker.get(q.marker)?.[0]?.at ?? Infinity) - q.at }));
    const late = delays.filter((d) => d.ms > ANSWER_WITHIN_MS);
    const worst = delays.reduce((max, d) => (d.ms > max.ms ? d : max), { marker: '', ms: 0 });
    const moved = [...movedAfter(firstRooms, first, firstKilledAt), ...movedAfter(secondRooms, second, secondKilledAt)];
    const postedAfterResuming = (proxies.get(first)?.requests ?? []).filter(
      (r) => r.at >= resumedAt && postedText(r) !== undefined,
    ).length;
    const retried = (slack?.deliveries ?? []).filter((d) => Number(d.envelope.retry_attempt ?? 0) > 0).length;
    const during = (from: number, to: number) => asked.filter((q) => q.at >= from && q.at < to).length;
    console.log(
      [
        `replicas test: ${asked.length} questions in 20 rooms (${during(firstKilledAt, firstKilledAt + 10_000)} while ${first} was down,`,
        `${during(secondKilledAt, roomsMovedAt)} while ${second}'s rooms moved, ${during(pausedAt, resumedAt)} during the pause),`,
        `killed ${first} holding ${firstRooms.length} rooms, then ${second} holding ${secondRooms.length};`,
        `paused ${first} holding ${pausedRooms.length} rooms with ${underWay.length} model calls under way;`,
        `first answer by the other replica in a moved room within ${(Math.max(...moved.filter(Number.isFinite)) / 1000).toFixed(1)} s;`,
        `worst answer delay ${(worst.ms / 1000).toFixed(1)} s (${worst.marker}); ${calls.length} model calls;`,
        `${retried} Slack envelopes sent again (unacknowledged);`,
        `${postedAfterResuming} posts by ${first} after it resumed`,
      ].join(' '),
    );

    expect({ unanswered, doubled, unasked, late }).toEqual({ unanswered: [], doubled: [], unasked: [], late: [] });
    expect(otherPosts).toEqual([]);
    // The resumed replica posted nothing it was doing when paused: each answer it posted after resuming comes from a
    // model call it made after resuming; what it had under way was answered once, by the other replica.
    const fresh = (text: string) => {
      const [, marker, by] = /re: (\S+) by (\w+)/.exec(text) ?? [];
      return by === first && calls.some((c) => c.marker === marker && c.replica === first && c.at >= resumedAt);
    };
    const stale = (proxies.get(first)?.requests ?? [])
      .filter((r) => r.at >= resumedAt)
      .map(postedText)
      .filter((text): text is string => text !== undefined && !fresh(text));
    expect(stale).toEqual([]);
    // (Its proxy saw its posts before the pause: the records are what it sent.)
    expect((proxies.get(first)?.requests ?? []).some((r) => r.at < pausedAt && postedText(r) !== undefined)).toBe(true);
    expect(underWay.length).toBeGreaterThan(0);
    // What it had under way was answered once: by the other replica, or — when the resumed one took a room back
    // before the other had taken it up (its lease was free) — by the resumed one from a call made after resuming.
    for (const marker of underWay) {
      const answers = byMarker.get(marker) ?? [];
      expect(answers).toHaveLength(1);
      const [answer] = answers;
      if (answer?.by === first) {
        expect(calls.some((c) => c.marker === marker && c.replica === first && c.at >= resumedAt)).toBe(true);
      } else expect(answer?.by).toBe(second);
    }
    // The pause lost the replica its rooms: the other one served them meanwhile.
    expect(pausedRooms.length).toBeGreaterThan(0);
  }, 600_000);
});
