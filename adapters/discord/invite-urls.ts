/**
 * `npm run discord:invite`: prints, for each agent's bot, the URL that adds it to a server with the scopes and
 * permissions the bridge uses. Every bot also needs the Message Content intent switched on in the portal.
 */
import { pathToFileURL } from 'node:url';
import { OAuth2Routes, PermissionFlagsBits, type RESTOptions, Routes } from 'discord.js';
import type { Config } from '../../src/config/index.js';
import { controlAgentOf } from './discord-adapter.js';
import { restFor } from './register-commands.js';
import { noDiscordAgent, processIo, runScript, type ScriptIo } from './script.js';

/** See and read channels, post (also in threads), read history for catch-up after a reconnect. */
export const BOT_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.SendMessagesInThreads |
  PermissionFlagsBits.ReadMessageHistory |
  PermissionFlagsBits.EmbedLinks |
  PermissionFlagsBits.AttachFiles;

export function inviteUrl(applicationId: string, withCommands: boolean): string {
  const params = new URLSearchParams({
    client_id: applicationId,
    scope: withCommands ? 'bot applications.commands' : 'bot',
    permissions: BOT_PERMISSIONS.toString(),
  });
  return `${OAuth2Routes.authorizationURL}?${params.toString()}`;
}

export async function inviteUrls(
  config: Config,
  extra: Partial<RESTOptions> = {},
): Promise<{ agent: string; url: string }[]> {
  const control = controlAgentOf(config);
  const urls: { agent: string; url: string }[] = [];
  for (const agent of config.agents) {
    if (!agent.discord) continue;
    const app = (await restFor(config, agent.discord.token, extra).get(Routes.currentApplication())) as { id: string };
    urls.push({ agent: agent.name, url: inviteUrl(app.id, agent === control) });
  }
  return urls;
}

export const INVITE_USAGE = 'usage: npm run discord:invite';

/** The script: returns the exit code (the same codes as every script). */
export async function inviteMain(argv: readonly string[], io: ScriptIo = processIo()): Promise<number> {
  return runScript('discord:invite', INVITE_USAGE, argv, io, async (config) => {
    if (!config.agents.some((agent) => agent.discord)) throw noDiscordAgent(config);
    for (const { agent, url } of await inviteUrls(config, io.rest)) io.out(`@${agent}: ${url}\n`);
    io.out('Each bot needs the Message Content intent (developer portal → Bot → Privileged Gateway Intents).\n');
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await inviteMain(process.argv.slice(2));
}
