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
      const unreachable = status === undefined ? networkCode(error) : undefined;
      const api = config.settings.DISCORD_API_URL ?? 'https://discord.com/api';
      const detail =
        status === 401
          ? 'token refused (401): copy the bot token again from the developer portal (Bot → Reset Token)'
          : unreachable
            ? `cannot reach Discord at ${api} (${unreachable}): the token was not tried; check the network, a proxy or DISCORD_API_URL`
            : `GET /users/@me failed: ${(error as Error).message}`;
      results.push({ ok: false, item, detail });
    }
  }
  return results;
}

/** The system's code of a failure to reach the server at all (refused, no such host, timed out), if it was one. */
function networkCode(error: unknown): string | undefined {
  for (let at: unknown = error, depth = 0; at && depth < 4; at = (at as { cause?: unknown }).cause, depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code;
    if ((at as Error).name === 'AbortError' || (at as Error).name === 'TimeoutError') return 'no answer in time';
  }
  return undefined;
}
