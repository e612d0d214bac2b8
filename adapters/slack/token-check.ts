import type { Config } from '../../src/config/index.js';
import type { CheckResult } from '../../src/self-check.js';
import { webClientOptions } from './web-call.js';

/** One Web API call with a token; Slack answers 200 with `{ ok, error }`. */
async function call(base: string, method: string, token: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    signal: AbortSignal.timeout(15_000),
  });
  if (!response.ok) throw new Error(`${method} answered HTTP ${response.status}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * Each agent's Slack tokens: the bot token with auth.test, the app token (Socket Mode) with
 * apps.connections.open, which only hands out a connection URL.
 */
export async function checkSlackTokens(config: Config): Promise<CheckResult[]> {
  const base = webClientOptions(config.settings.SLACK_API_URL).slackApiUrl;
  const results: CheckResult[] = [];
  for (const agent of config.agents) {
    if (!agent.slack) continue;
    const item = `Slack @${agent.name}`;
    try {
      const auth = await call(base, 'auth.test', agent.slack.botToken);
      if (auth.ok !== true) {
        results.push({ ok: false, item, detail: `bot token refused by auth.test (${String(auth.error)})` });
        continue;
      }
      const where = `bot user ${String(auth.user)} in ${String(auth.team)}`;
      if (agent.slack.appToken) {
        const socket = await call(base, 'apps.connections.open', agent.slack.appToken);
        if (socket.ok !== true) {
          results.push({
            ok: false,
            item,
            detail: `app token refused by apps.connections.open (${String(socket.error)}); it needs the connections:write scope`,
          });
          continue;
        }
      }
      const mode = agent.slack.appToken ? 'Socket Mode' : 'HTTP mode';
      results.push({ ok: true, item, detail: `tokens accepted (${where}; ${mode})` });
    } catch (error) {
      results.push({ ok: false, item, detail: `cannot reach ${base}: ${(error as Error).message}` });
    }
  }
  return results;
}
