/**
 * `npm run discord:commands`: registers `/pass`, `/reset`, `/status` with the control identity only (per guild
 * with DISCORD_GUILD_ID, which applies at once; else globally), and clears them from the other agents' bots
 * so the command picker lists each command once.
 */
import { pathToFileURL } from 'node:url';
import { REST, type RESTOptions, Routes } from 'discord.js';
import { type Config, environmentWithDotenv, loadConfig } from '../../src/config/index.js';
import { ConfigError, describeError } from '../../src/errors.js';
import { commandDefinitions } from './commands.js';
import { controlAgentOf } from './discord-adapter.js';

export interface Registration {
  readonly agent: string;
  readonly applicationId: string;
  readonly scope: string;
  readonly commands: number;
}

export function restFor(config: Config, token: string, extra: Partial<RESTOptions> = {}): REST {
  const api = config.settings.DISCORD_API_URL;
  return new REST({ ...(api ? { api } : {}), ...extra }).setToken(token);
}

export async function registerCommands(config: Config, extra: Partial<RESTOptions> = {}): Promise<Registration[]> {
  const control = controlAgentOf(config);
  if (!control?.discord) {
    throw new ConfigError(config.settings.AGENTS_DIR, 'discord.token_env', 'no agent has a Discord bot token');
  }
  const guild = config.settings.DISCORD_GUILD_ID;
  const scope = guild ? `guild ${guild}` : 'global';
  const results: Registration[] = [];
  for (const agent of config.agents) {
    if (!agent.discord) continue;
    const rest = restFor(config, agent.discord.token, extra);
    const app = (await rest.get(Routes.currentApplication())) as { id: string };
    const body = agent === control ? commandDefinitions(config.agents.map((a) => a.name)) : [];
    const route = guild ? Routes.applicationGuildCommands(app.id, guild) : Routes.applicationCommands(app.id);
    await rest.put(route, { body });
    results.push({ agent: agent.name, applicationId: app.id, scope, commands: body.length });
  }
  return results;
}

async function main(): Promise<void> {
  const config = loadConfig(environmentWithDotenv(process.cwd()));
  for (const result of await registerCommands(config)) {
    const what = result.commands > 0 ? `registered ${result.commands} commands` : 'cleared its commands';
    console.log(`@${result.agent} (application ${result.applicationId}): ${what} (${result.scope})`);
  }
  if (!config.settings.DISCORD_GUILD_ID) {
    console.log('Global commands can take up to an hour to appear; set DISCORD_GUILD_ID for instant ones.');
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(`discord:commands failed: ${describeError(error)}`);
    process.exitCode = 1;
  });
}
