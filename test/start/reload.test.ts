/**
 * A running bridge follows its `.env` (docs/trust.md, "Changes without a restart"): a person added to ACCESS_USERS
 * there wakes the agents from their next message, with no restart.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/main.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';

let dir: string;
let discord: FakeDiscord | undefined;
let llm: FakeOpenAI | undefined;
afterEach(async () => {
  await discord?.close();
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the access policy of a running bridge', () => {
  it('follows a change to .env without a restart', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-reload-run-'));
    mkdirSync(path.join(dir, 'agents'));
    writeFileSync(
      path.join(dir, 'agents', 'data.md'),
      '---\nname: data\nmodel: data\nactivation: always\ndiscord: { token_env: DATA_TOKEN }\n---\nYou are data.\n',
    );
    llm = await startFakeOpenAI();
    llm.respond(() => ({ content: 'data here' }));
    discord = await startFakeDiscord({
      bots: [{ token: 'tok-data', name: 'data-bot' }],
      humans: [{ name: 'alice' }, { name: 'mallory' }],
      channels: ['general'],
    });
    const fake = discord;
    const env = (users: string) => writeFileSync(path.join(dir, '.env'), `ACCESS_USERS=${users}\nLOG_LEVEL=silent\n`);
    env(fake.human('alice').id);
    const running = await run({
      argv: [],
      cwd: dir,
      env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', DATA_TOKEN: 'tok-data', DISCORD_API_URL: fake.apiURL },
      sandbox: async () => new FakeSandbox(),
    });
    try {
      await vi.waitFor(() => expect(fake.botMessages('general').length).toBe(0), { timeout: 5_000 });
      const refused = fake.humanSays('general', 'mallory', 'hello?');
      // Told why, once: the policy read at start keeps mallory out.
      await vi.waitFor(
        () =>
          expect(
            fake
              .botMessages('general')
              .map((m) => m.content)
              .join(),
          ).toContain('access list'),
        {
          timeout: 20_000,
        },
      );
      expect(llm.requests).toHaveLength(0);
      void refused;

      env(`${fake.human('alice').id},${fake.human('mallory').id}`);
      // The watch reads it within a moment; each try is a new message (the first may come before the read).
      await vi.waitFor(
        () => {
          if (llm?.requests.length === 0) fake.humanSays('general', 'mallory', 'hello again?');
          expect(llm?.requests.length).toBeGreaterThan(0);
        },
        { timeout: 30_000, interval: 1_000 },
      );
    } finally {
      await running.shutdown();
    }
  }, 60_000);
});
