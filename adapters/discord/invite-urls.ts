/**
 * `npm run discord:invite`: prints, for each agent's bot, the URL that adds it to a server with the scopes and
 * permissions the bridge uses. Every bot also needs the Message Content intent switched on in the portal.
 */
import { pathToFileURL } from 'node:url';
import { OAuth2Routes, PermissionFlagsBits, type RESTOptions, Routes } from 'discord.js';
import { type Config, environmentWithDotenv, loadConfig } from '../../src/config/index.js';
import { describeError } from '../../src/errors.js';
import { controlAgentOf } from './discord-adapter.js';
import { restFor } from './register-commands.js';

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

async function main(): Promise<void> {
  const config = loadConfig(environmentWithDotenv(process.cwd()));
  const urls = await inviteUrls(config);
  if (urls.length === 0) console.log('No agent has a Discord token (discord.token_env in its agent file).');
  for (const { agent, url } of urls) console.log(`@${agent}: ${url}`);
  if (urls.length > 0) {
    console.log('Each bot needs the Message Content intent (developer portal → Bot → Privileged Gateway Intents).');
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(`discord:invite failed: ${describeError(error)}`);
    process.exitCode = 1;
  });
}
