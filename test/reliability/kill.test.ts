/**
 * The bridge as a real process, killed (SIGKILL) at 20 seeded random points of a conversation held on the Discord
 * and Slack fakes at once, and started again each time: no human message is lost, every question is answered,
 * and no answer is posted twice. KILL_TEST_LOG=1 keeps the bridge's debug log and data folder, and prints the log's end.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { type FakeOpenAI, type RecordedRequest, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { writeAnsweringAgent } from '../helpers/bridge-child.js';
import { roomMessagesOf } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';

const KILLS = 20;
const QUESTIONS = 14;
const SEED = 20_250_601;

/** A small seeded generator (mulberry32): the same kill points on every run. */
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

/** The question a request answers: the newest human line that asks one (the agent's own lines are the assistant's). */
const question = (request: RecordedRequest) =>
  [...roomMessagesOf(request)]
    .reverse()
    .filter((m) => m.role === 'user')
    .map((m) => /question \d+/.exec(String(m.content))?.[0])
    .find(Boolean);

/** Generous: on a busy machine one start of the bridge (tsx compiling it) takes 10 s and more. */
async function until(predicate: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('killed at random points (a real process, SIGKILL)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-kill-'));
  let discord: FakeDiscord;
  let slack: FakeSlack;
  let llm: FakeOpenAI;
  let child: ChildProcess | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL');
    if (process.env.KILL_TEST_LOG) {
      try {
        console.log(readFileSync(path.join(dir, 'bridge.log'), 'utf8').split('\n').slice(-400).join('\n'));
        console.log(
          discord.botMessages('general').map((m) => m.content),
          slack.posts().map((m) => m.text),
        );
      } catch {}
    }
    await llm?.close();
    await discord?.close();
    await slack?.close();
    if (process.env.KILL_TEST_LOG) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });

  it('loses no human message, leaves no question unanswered and answers none twice', async () => {
    const random = seeded(SEED);
    discord = await startFakeDiscord({ bots: [{ token: 'tok-code', name: 'code-bot' }], channels: ['general'] });
    slack = await startFakeSlack();
    const app = slack.addApp('code');
    const alice = slack.addHuman('alice', 'Alice');
    const general = slack.addChannel('general', [alice, app]);
    llm = await startFakeOpenAI();
    // The model takes 30-230 ms, so kills land before, during and after its answer.
    llm.respond((request, index) => ({
      content: `re: ${question(request) ?? 'nothing'}`,
      delayMs: 30 + ((index * 7919) % 200),
    }));

    const agents = writeAnsweringAgent(dir);
    const env = {
      PATH: process.env.PATH ?? '',
      ROUNDTABLE_CWD: dir,
      AGENTS_DIR: agents,
      DATA_DIR: path.join(dir, 'data'),
      LOG_FILE: path.join(dir, 'bridge.log'),
      LOG_LEVEL: process.env.KILL_TEST_LOG ? 'debug' : 'info',
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'test-key',
      LLM_MAX_RETRIES: '0',
      LLM_TIMEOUT_S: '20',
      DISCORD_API_URL: discord.apiURL,
      DISCORD_TOKEN_CODE: 'tok-code',
      SLACK_API_URL: slack.apiUrl,
      SLACK_BOT_TOKEN_CODE: app.botToken,
      SLACK_APP_TOKEN_CODE: app.appToken,
    };
    const childScript = path.join(import.meta.dirname, 'kill-child.ts');
    let starts = 0;
    const start = () => {
      starts++;
      const proc = spawn(process.execPath, ['--import', 'tsx', childScript], {
        env,
        cwd: path.resolve(import.meta.dirname, '../..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const ready = new Promise<boolean>((resolve) => {
        proc.stdout?.on('data', (data: Buffer) => {
          if (data.toString().includes('ready')) resolve(true);
        });
        proc.once('exit', () => resolve(false));
      });
      child = proc;
      return ready;
    };
    let kills = 0;
    const kill = async () => {
      const proc = child;
      if (!proc || proc.exitCode !== null) return;
      const gone = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGKILL');
      await gone;
      kills++;
    };

    const bot = discord.bot('code-bot');
    expect(await start()).toBe(true);
    const opener = slack.say(alice, general, `<@${app.botUserId}> a thread for our questions`);
    await until(() => slack.posts(general).length > 0, 'the first answer');

    const discordAnswers = () => discord.botMessages('general').map((m) => m.content);
    const slackAnswers = () => slack.posts(general).map((m) => m.text);
    const answered = (n: number) =>
      discordAnswers().includes(`re: question ${n}`) && slackAnswers().includes(`re: question ${n}`);

    for (let n = 1; n <= QUESTIONS; n++) {
      discord.humanSays('general', 'alice', `<@${bot.id}> question ${n}`);
      slack.say(alice, general, `<@${app.botUserId}> question ${n}`, { threadTs: opener.ts });
      // A kill point: some time after the question (before, during or after its answer) ...
      if (kills < KILLS) {
        await sleep(random() * 300);
        await kill();
        // ... and now and then another one while the bridge is starting again (during its catch-up).
        if (kills < KILLS && random() < 0.45) {
          void start();
          await sleep(300 + random() * 1200);
          await kill();
        }
        expect(await start()).toBe(true);
      }
      await until(() => answered(n), `the answers to question ${n}`);
    }
    while (kills < KILLS) {
      await kill();
      expect(await start()).toBe(true);
    }
    // Let the last start settle, then stop the bridge cleanly to read its store.
    await sleep(500);
    const proc = child as ChildProcess;
    const stopped = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await stopped;

    expect(kills).toBe(KILLS);
    // Nothing doubled, nothing unanswered, on either platform.
    const expected = Array.from({ length: QUESTIONS }, (_, i) => `re: question ${i + 1}`);
    expect(discordAnswers()).toEqual(expected);
    expect(slackAnswers()).toEqual(['re: nothing', ...expected]);
    // Nothing lost: every human message is stored, in the platform's order.
    const store = openStore(path.join(dir, 'data', 'roundtable.db'));
    try {
      const humans = async (platform: string, room: string) =>
        (await history(store, platform, room, 1000)).filter((m) => m.kind === 'human').map((m) => m.content);
      expect(await humans('discord', discord.channel('general').id)).toEqual(
        discord
          .messages('general')
          .filter((m) => m.authorId !== bot.id)
          .map((m) => m.content.replace(`<@${bot.id}>`, '@code')),
      );
      expect(await humans('slack', `${general.id}/${opener.ts}`)).toEqual([
        '@code a thread for our questions',
        ...Array.from({ length: QUESTIONS }, (_, i) => `@code question ${i + 1}`),
      ]);
    } finally {
      await store.close();
    }
    console.log(
      `kill test: ${kills} kills, ${starts} starts, ${QUESTIONS} questions on each platform, ${llm.requests.length} model calls`,
    );
  }, 900_000);
});
