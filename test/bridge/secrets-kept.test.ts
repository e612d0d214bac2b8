import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, newestOf, startHarness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

/** One planted value per place a secret can be configured; none may show up anywhere. */
const S = {
  openaiKey: 'sk-planted0openai0key0abcdef123456', // the global key, token-shaped
  reviewKey: 'planted-review-key-7f3a9c', // a per-agent key with no recognisable shape
  dataKey: 'planted-data-key-41d0e2',
  basePassword: 'base-pw/with@odd:chars', // OPENAI_BASE_URL user:password
  baseQueryKey: 'planted-base-query-key-55',
  codeQueryKey: 'planted-code-api-key-66',
  codeQueryToken: 'planted-code-token-77',
  gonePassword: 'gone-password-88',
  goneQueryKey: 'planted-gone-key-99',
  discordToken: 'planted-discord-bot-token-aa',
  discordApiPassword: 'discord-api-pw-bb',
  discordApiToken: 'planted-discord-api-token-cc',
  slackBot: 'xoxb-planted-11-22-slackbot',
  slackApp: 'planted-slack-app-token-dd',
  slackSigning: 'planted-slack-signing-ee',
  slackApiPassword: 'slack-api-pw-ff',
  slackApiSig: 'planted-slack-sig-gg',
};

let h: Harness | undefined;
let dir: string;
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function agentFile(name: string, front: string): void {
  writeFileSync(
    path.join(dir, 'agents', `${name}.md`),
    `---\nname: ${name}\nmodel: ${name}\n${front}\n---\nYou are ${name}.\n`,
  );
}

const withLogin = (url: string, login: string) => url.replace('http://', `http://${login}@`);

/** The key or login a request carried, as a server that echoes it in its error would. */
function credentialOf(request: RecordedRequest): string {
  const auth = request.headers.authorization ?? '';
  if (auth.startsWith('Basic ')) return Buffer.from(auth.slice(6), 'base64').toString('utf8');
  return auth.replace(/^Bearer /, '');
}

describe('secrets stay secret', () => {
  it('never shows a configured secret in the room, the database, the log or the prompts', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-secrets-'));
    mkdirSync(path.join(dir, 'agents'));
    const logFile = path.join(dir, 'roundtable.log');
    const dbFile = path.join(dir, 'roundtable.db');
    // A tool whose error (and a sandbox whose status) happens to print every secret there is.
    const sandbox = new FakeSandbox(() => {
      throw new Error(`registry login failed: ${Object.values(S).join(' ')}`);
    });
    sandbox.describe = async () => {
      throw new Error(`cannot inspect: ${Object.values(S).join(' ')}`);
    };

    h = await startHarness({
      agents: [],
      sandbox,
      storeFile: dbFile,
      logger: createLogger({ level: 'debug', file: logFile }),
      config: (llmURL) => {
        const port = new URL(llmURL).port;
        agentFile(
          'code',
          `endpoint: http://127.0.0.1:${port}/v1?api-key=${S.codeQueryKey}&token=${S.codeQueryToken}\ntools: [bash]\nslack:\n  bot_token_env: SLACK_BOT\n  app_token_env: SLACK_APP\n  signing_secret_env: SLACK_SIGNING`,
        );
        agentFile('data', 'api_key_env: DATA_KEY\ndiscord:\n  token_env: DISCORD_TOKEN');
        agentFile('gone', `endpoint: http://carol:${S.gonePassword}@127.0.0.1:1/v1?api-key=${S.goneQueryKey}`);
        agentFile('review', `api_key_env: REVIEW_KEY\nendpoint: ${llmURL}`);
        return loadConfig(
          {
            AGENTS_DIR: 'agents',
            LLM_MAX_RETRIES: '0',
            OPENAI_BASE_URL: `${withLogin(llmURL, `alice:${encodeURIComponent(S.basePassword)}`)}?key=${S.baseQueryKey}`,
            OPENAI_API_KEY: S.openaiKey,
            DATA_KEY: S.dataKey,
            REVIEW_KEY: S.reviewKey,
            DISCORD_TOKEN: S.discordToken,
            DISCORD_API_URL: `http://dan:${S.discordApiPassword}@127.0.0.1:9/api?token=${S.discordApiToken}`,
            SLACK_BOT: S.slackBot,
            SLACK_APP: S.slackApp,
            SLACK_SIGNING: S.slackSigning,
            SLACK_API_URL: `http://sam:${S.slackApiPassword}@127.0.0.1:9/api/?sig=${S.slackApiSig}`,
          },
          dir,
        );
      },
    });
    const llm = h.llm;
    llm.respond((request) => {
      const agent = agentOf(request);
      const last = request.messages.at(-1);
      if (agent === 'code' && last?.role !== 'tool' && newestOf(request).includes('log in please')) {
        return { toolCalls: [{ name: 'bash', arguments: { command: 'docker login' } }] };
      }
      if (agent === 'code' && last?.role === 'tool') return { content: 'The login did not work.' };
      // A server that echoes the key it got, and one that names the whole request it refused.
      if (agent === 'data') {
        return { status: 401, errorMessage: `Unauthorized ${credentialOf(request)} for ${request.url}` };
      }
      return { status: 401, errorMessage: `Incorrect API key provided: ${credentialOf(request)}` };
    });

    for (const text of ['@review hello', '@data hello', '@code log in please', '@code again', '@gone hello']) {
      await h.adapter.say(text);
      await h.bridge.idle();
    }
    const status = await h.adapter.command('status');

    expect(status).toContain('Sandbox: unknown (Error: cannot inspect: [redacted]');
    const room = [...h.adapter.transcript(), status].join('\n');
    // The failures were reported, only without their secrets.
    expect(h.adapter.transcript()).toEqual([
      '[system]: @review could not answer: the model endpoint answered 401: Incorrect API key provided: [redacted]',
      '[system]: @data could not answer: the model endpoint answered 401: Unauthorized alice:[redacted] for /v1/chat/completions?key=[redacted]',
      '[@code]: The login did not work.',
      '[system]: @code could not answer: the model endpoint answered 401: Incorrect API key provided: [redacted]',
      `[system]: @gone could not answer: cannot reach the model endpoint http://[redacted]@127.0.0.1:1/v1?api-key=[redacted]`,
    ]);
    // The servers really were sent the credentials they echoed (so the test plants them for real).
    expect(llm.requests.map((r) => `${agentOf(r)} ${credentialOf(r)}`)).toContain(`review ${S.reviewKey}`);
    expect(llm.requests.map((r) => `${agentOf(r)} ${credentialOf(r)}`)).toContain(`data alice:${S.basePassword}`);
    expect(llm.requests.map((r) => `${agentOf(r)} ${credentialOf(r)}`)).toContain(`code ${S.openaiKey}`);

    // What the agents were shown: the tool error fed back to @code, and the failures in the history.
    const prompts = JSON.stringify(llm.requests.map((r) => r.messages));
    expect(prompts).toContain('[ERROR: the sandbox failed: registry login failed: [redacted]');
    expect(prompts).toContain('Incorrect API key provided: [redacted]');

    // The database, its write-ahead log included, while the store is open.
    const db = ['', '-wal', '-shm']
      .map((suffix) => `${dbFile}${suffix}`)
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file).toString('latin1'))
      .join('\n');
    expect(db).toContain('[redacted]');

    await until(
      () => existsSync(logFile) && (readFileSync(logFile, 'utf8').match(/agent turn failed/g) ?? []).length === 4,
    );
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain('[redacted]');

    for (const [name, value] of Object.entries(S)) {
      for (const form of new Set([value, encodeURIComponent(value)])) {
        expect({ name, inRoom: room.includes(form) }).toEqual({ name, inRoom: false });
        expect({ name, inPrompts: prompts.includes(form) }).toEqual({ name, inPrompts: false });
        expect({ name, inDatabase: db.includes(form) }).toEqual({ name, inDatabase: false });
        expect({ name, inLog: log.includes(form) }).toEqual({ name, inLog: false });
      }
    }
  });

  it('redacts every system message before it is posted and stored, whatever its source', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-secrets-'));
    h = await startHarness({ agents: [{ name: 'code' }] });
    h.llm.respond(() => ({
      status: 502,
      errorMessage: 'the proxy http://op:pw-9@proxy.test/ said: xoxb-1111-2222-abcdefgh',
    }));
    await h.adapter.say('@code hello');
    await h.bridge.idle();
    const line =
      '@code could not answer: the model endpoint answered 502: the proxy http://[redacted]@proxy.test/ said: [redacted]';
    expect(h.adapter.transcript()).toEqual([`[system]: ${line}`]);
    const room = await h.store.rooms.open('test', 'room');
    expect((await h.store.rooms.history(room.id, 5)).map((m) => m.content)).toEqual(['@code hello', line]);
  });
});
