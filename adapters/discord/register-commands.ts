/**
 * `npm run discord:commands`: registers `/pass`, `/reset`, `/status` with the control identity only (per guild
 * with DISCORD_GUILD_ID, which applies at once; else globally), and clears them from the other agents' bots
 * so the command picker lists each command once.
 */
import { pathToFileURL } from 'node:url';
import { REST, type RESTOptions, Routes } from 'discord.js';
import type { Config } from '../../src/config/index.js';
import { commandDefinitions } from './commands.js';
import { controlAgentOf } from './discord-adapter.js';
import { noDiscordAgent, processIo, runScript, type ScriptIo } from './script.js';

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
  if (!control?.discord) throw noDiscordAgent(config);
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

export const COMMANDS_USAGE = 'usage: npm run discord:commands';

/** The script: returns the exit code (the same codes as every script). */
export async function commandsMain(argv: readonly string[], io: ScriptIo = processIo()): Promise<number> {
  return runScript('discord:commands', COMMANDS_USAGE, argv, io, async (config) => {
    for (const result of await registerCommands(config, io.rest)) {
      const what = result.commands > 0 ? `registered ${result.commands} commands` : 'cleared its commands';
      io.out(`@${result.agent} (application ${result.applicationId}): ${what} (${result.scope})\n`);
    }
    if (!config.settings.DISCORD_GUILD_ID) {
      io.out('Global commands can take up to an hour to appear; set DISCORD_GUILD_ID for instant ones.\n');
    }
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await commandsMain(process.argv.slice(2));
}
