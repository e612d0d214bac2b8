import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOT_PERMISSIONS, inviteUrls } from '../../adapters/discord/invite-urls.js';
import { registerCommands } from '../../adapters/discord/register-commands.js';
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
      ['code', 4],
    ]);
    const code = fake.commands.get(`${fake.bot('code-bot').applicationId}:${guild}`) as { name: string }[];
    expect(code.map((command) => command.name)).toEqual(['pass', 'reset', 'status', 'privacy']);
    expect(fake.commands.get(`${fake.bot('data-bot').applicationId}:${guild}`)).toEqual([]);
  });

  it('registers globally without DISCORD_GUILD_ID', async () => {
    await registerCommands(config(), { globalRequestsPerSecond: 10_000 });
    expect(fake.commands.get(`${fake.bot('code-bot').applicationId}:global`)).toHaveLength(4);
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
});
