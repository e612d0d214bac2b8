import type { AgentConfig } from '../config/index.js';

/** The address of OpenAI's own API: the one endpoint where a missing key is certainly a mistake. */
export const OPENAI_HOST = 'api.openai.com';

/** True when the agent talks to OpenAI's own API without a key. */
export function lacksOpenAiKey(agent: Pick<AgentConfig, 'endpoint' | 'apiKey'>): boolean {
  if (agent.apiKey) return false;
  try {
    return new URL(agent.endpoint).hostname === OPENAI_HOST;
  } catch {
    return false;
  }
}

export interface EndpointCheck {
  readonly ok: boolean;
  readonly detail: string;
}

/**
 * Asks an OpenAI-compatible endpoint for its model list (cheap, no tokens spent): reachable, and
 * the key accepted. A server without /models (404, 405) still counts as reachable.
 */
export async function checkEndpoint(
  endpoint: string,
  apiKey: string | undefined,
  timeoutMs: number,
): Promise<EndpointCheck> {
  const url = `${endpoint.replace(/\/+$/, '')}/models`;
  let status: number;
  try {
    const response = await fetch(url, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    await response.body?.cancel();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${timeoutMs / 1000} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { ok: false, detail: `cannot reach ${url} (${reason})` };
  }
  if (status === 401 || status === 403) {
    return {
      ok: false,
      detail: apiKey ? `the key was refused (GET /models: ${status})` : `it wants an API key (GET /models: ${status})`,
    };
  }
  if (status >= 200 && status < 300) return { ok: true, detail: `reachable (GET /models: ${status})` };
  if (status === 404 || status === 405) return { ok: true, detail: `reachable (it has no /models: ${status})` };
  return { ok: false, detail: `GET /models answered ${status}` };
}
