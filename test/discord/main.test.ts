import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { agentOf } from '../helpers/harness.js';

function agentFile(name: string, activation: string, tokenEnv: string): string {
  return `---\nname: ${name}\nmodel: ${name}\nactivation: ${activation}\ndiscord:\n  token_env: ${tokenEnv}\n---\nYou are ${name}.\n`;
}

describe('npm start with Discord tokens', () => {
  let discord: FakeDiscord | undefined;
  let llm: FakeOpenAI | undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-discord-main-'));
  afterAll(async () => {
    await discord?.close();
    await llm?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects every agent as its own bot and answers in the channel', async () => {
    discord = await startFakeDiscord({
      bots: [
        { token: 'tok-data', name: 'data-bot' },
        { token: 'tok-code', name: 'code-bot' },
      ],
    });
    llm = await startFakeOpenAI();
    llm.respond((request) => ({ content: `${agentOf(request)} at your service` }));
    mkdirSync(path.join(dir, 'agents'));
    writeFileSync(path.join(dir, 'agents', 'data.md'), agentFile('data', 'always', 'DISCORD_TOKEN_DATA'));
    writeFileSync(path.join(dir, 'agents', 'code.md'), agentFile('code', 'mention', 'DISCORD_TOKEN_CODE'));
    const running = await run({
      argv: [],
      cwd: dir,
      env: {
        DISCORD_TOKEN_DATA: 'tok-data',
        DISCORD_TOKEN_CODE: 'tok-code',
        DISCORD_API_URL: discord.apiURL,
        OPENAI_BASE_URL: llm.baseURL,
        LOG_LEVEL: 'silent',
      },
      sandbox: async () => new FakeSandbox(),
    });
    try {
      expect(running.console).toBeUndefined();
      const fake = discord;
      fake.humanSays('general', 'alice', `hello <@${fake.bot('code-bot').id}>`);
      await fake.until(() => fake.botMessages('general').length === 2);
      await running.bridge.idle();
      expect(fake.botMessages('general').map((m) => [fake.world.user(m.authorId)?.username, m.content])).toEqual([
        // Configured order is by file name: code.md, then data.md.
        ['code-bot', 'code at your service'],
        ['data-bot', 'data at your service'],
      ]);
    } finally {
      await running.shutdown();
    }
  });
});
