import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOT_PERMISSIONS, INVITE_USAGE, inviteMain, inviteUrls } from '../../adapters/discord/invite-urls.js';
import { COMMANDS_USAGE, commandsMain, registerCommands } from '../../adapters/discord/register-commands.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { testConfig } from '../helpers/config.js';

describe('Discord setup scripts', () => {
  let fake: FakeDiscord;
  beforeAll(async () => {
    fake = await startFakeDiscord({
      bots: [
        { token: 'tok-data', name: 'data-bot' },
        { token: 'tok-code', name: 'code-bot' },
      ],
    });
  });
  afterAll(async () => fake?.close());

  const config = (env: Record<string, string> = {}) =>
    testConfig({
      agents: [
        { name: 'data', discord: { token: 'tok-data', control: false } },
        { name: 'code', discord: { token: 'tok-code', control: true } },
        { name: 'local' },
      ],
      env: { DISCORD_API_URL: fake.apiURL, ...env },
    });

  it('registers the commands with the control identity only, per guild when DISCORD_GUILD_ID is set', async () => {
    const guild = fake.world.guildId;
    const results = await registerCommands(config({ DISCORD_GUILD_ID: guild }), { globalRequestsPerSecond: 10_000 });
    expect(results.map((r) => [r.agent, r.commands])).toEqual([
      ['data', 0],
      ['code', 9],
    ]);
    const code = fake.commands.get(`${fake.bot('code-bot').applicationId}:${guild}`) as { name: string }[];
    expect(code.map((command) => command.name)).toEqual([
      'pass',
      'reset',
      'status',
      'privacy',
      'budget',
      'access',
      'pair',
      'approve',
      'deny',
    ]);
    expect(fake.commands.get(`${fake.bot('data-bot').applicationId}:${guild}`)).toEqual([]);
  });

  it('registers globally without DISCORD_GUILD_ID', async () => {
    await registerCommands(config(), { globalRequestsPerSecond: 10_000 });
    expect(fake.commands.get(`${fake.bot('code-bot').applicationId}:global`)).toHaveLength(9);
  });

  it('prints an invite URL per bot with the permissions it needs', async () => {
    const urls = await inviteUrls(config(), { globalRequestsPerSecond: 10_000 });
    expect(urls.map((entry) => entry.agent)).toEqual(['data', 'code']);
    const code = new URL(urls[1]?.url ?? '');
    expect(code.searchParams.get('client_id')).toBe(fake.bot('code-bot').applicationId);
    expect(code.searchParams.get('scope')).toBe('bot applications.commands');
    expect(code.searchParams.get('permissions')).toBe(BOT_PERMISSIONS.toString());
    expect(new URL(urls[0]?.url ?? '').searchParams.get('scope')).toBe('bot');
  });

  describe('as scripts: the same exit code for the same situation', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rt-discord-scripts-'));
    mkdirSync(path.join(dir, 'agents'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const setAgents = (discord: boolean) => {
      for (const name of ['data', 'code']) {
        const front = discord ? `discord: { token_env: TOKEN_${name.toUpperCase()} }\n` : '';
        writeFileSync(
          path.join(dir, 'agents', `${name}.md`),
          `---\nname: ${name}\nmodel: m\n${front}---\nYou are ${name}.\n`,
        );
      }
    };
    const script = async (main: typeof inviteMain, argv: string[] = []) => {
      let out = '';
      let err = '';
      const code = await main(argv, {
        out: (t) => (out += t),
        err: (t) => (err += t),
        cwd: dir,
        env: { DISCORD_API_URL: fake.apiURL, TOKEN_DATA: 'tok-data', TOKEN_CODE: 'tok-code' },
        rest: { globalRequestsPerSecond: 10_000 },
      });
      return { code, out, err };
    };

    it('exit 0 when done', async () => {
      setAgents(true);
      const invite = await script(inviteMain);
      expect(invite.code).toBe(0);
      expect(invite.out).toMatch(/^@code: https:\/\/discord\.com\/\S*oauth2\/authorize\?client_id=/);
      expect((await script(commandsMain)).code).toBe(0);
    });

    it('exit 1, with the same words, when no agent has a Discord token', async () => {
      setAgents(false);
      const message = 'no agent has a Discord bot token (name its variable in discord.token_env of the agent file)';
      const invite = await script(inviteMain);
      const commands = await script(commandsMain);
      expect([invite.code, commands.code]).toEqual([1, 1]);
      expect(invite.err).toBe(`discord:invite failed: ./agents: discord.token_env: ${message}\n`);
      expect(commands.err).toBe(`discord:commands failed: ./agents: discord.token_env: ${message}\n`);
    });

    it('exit 2 for an unknown flag, like slack:manifest and npm start', async () => {
      const invite = await script(inviteMain, ['--guild']);
      const commands = await script(commandsMain, ['now']);
      expect([invite.code, commands.code]).toEqual([2, 2]);
      expect(invite.err).toBe(`discord:invite: unknown option --guild\n${INVITE_USAGE}\n`);
      expect(commands.err).toBe(`discord:commands: unexpected argument "now"\n${COMMANDS_USAGE}\n`);
    });
  });
});
