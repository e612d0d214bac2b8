import { Routes } from 'discord.js';
import type { Config } from '../../src/config/index.js';
import type { CheckResult } from '../../src/self-check.js';
import { restFor } from './register-commands.js';

/** Each agent's Discord bot token, tried with GET /users/@me (no side effects). */
export async function checkDiscordTokens(config: Config): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const agent of config.agents) {
    if (!agent.discord) continue;
    const item = `Discord @${agent.name}`;
    try {
      const rest = restFor(config, agent.discord.token, { retries: 0, timeout: 15_000 });
      const user = (await rest.get(Routes.user('@me'))) as { username?: string; bot?: boolean };
      results.push({ ok: true, item, detail: `token accepted (bot user ${user.username ?? '?'})` });
    } catch (error) {
      const status = (error as { status?: number }).status;
      const detail =
        status === 401
          ? 'token refused (401): copy the bot token again from the developer portal (Bot → Reset Token)'
          : `GET /users/@me failed: ${(error as Error).message}`;
      results.push({ ok: false, item, detail });
    }
  }
  return results;
}
