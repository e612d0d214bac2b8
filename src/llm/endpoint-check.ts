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

/** What `GET /models` said about the models a server has. */
export type ModelList =
  /** The ids it lists (OpenAI, Ollama, vLLM, LM Studio, LiteLLM, ...). */
  | { readonly kind: 'listed'; readonly ids: readonly string[] }
  /** llama.cpp's server with one model: it answers whatever model name a request gives. */
  | { readonly kind: 'any'; readonly id: string }
  /** No list to compare with: no /models, or an answer that is not a model list. */
  | { readonly kind: 'unknown' };

export interface EndpointCheck {
  readonly ok: boolean;
  readonly detail: string;
  readonly models: ModelList;
  /** The base URL that answers where this one does not (the same with `/v1`). */
  readonly betterBase?: string;
}

const UNKNOWN: ModelList = { kind: 'unknown' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{ object: 'list', data: [{ id, object: 'model', owned_by }] }`, the shape OpenAI documents and others copy. */
export function readModelList(body: unknown): ModelList {
  if (!isRecord(body) || !Array.isArray(body.data)) return UNKNOWN;
  const entries = body.data.filter(isRecord);
  const ids = entries.map((entry) => entry.id).filter((id): id is string => typeof id === 'string' && id !== '');
  if (ids.length !== body.data.length) return UNKNOWN;
  const only = entries[0];
  if (entries.length === 1 && only?.owned_by === 'llamacpp' && ids[0]) return { kind: 'any', id: ids[0] };
  return { kind: 'listed', ids };
}

/**
 * Whether the server lists `model`. Ollama names a model `name:tag` and takes `name` for `name:latest`, so either
 * spelling is found.
 */
export function hasModel(ids: readonly string[], model: string): boolean {
  const wanted = model.includes(':') ? [model] : [model, `${model}:latest`];
  return ids.some((id) => wanted.includes(id));
}

/** A few of the listed ids, for a line that says what the server has. */
export function someModels(ids: readonly string[], count = 5): string {
  if (ids.length === 0) return 'none';
  const shown = ids.slice(0, count).join(', ');
  return ids.length > count ? `${shown} and ${ids.length - count} more` : shown;
}

interface Answer {
  readonly status: number;
  readonly body: unknown;
  /** The title of an HTML page answered instead of JSON ('' when it has none); undefined for anything else. */
  readonly page?: string | undefined;
}

/** An HTML page (a proxy's sign-in page, a web site) rather than an API's answer: its title, or ''. */
function pageTitle(contentType: string | null, text: string): string | undefined {
  if (!/\btext\/html\b/i.test(contentType ?? '') && !/^\s*<(!doctype|html)/i.test(text)) return undefined;
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim() ?? '';
  return title.replace(/\s+/g, ' ').slice(0, 80);
}

async function getJson(url: string, apiKey: string | undefined, timeoutMs: number): Promise<Answer> {
  const response = await fetch(url, {
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, page: pageTitle(response.headers.get('content-type'), text) };
}

/**
 * The same base with `/v1` (Ollama, llama.cpp, vLLM and LM Studio serve the OpenAI API under `/v1`), when that one
 * lists models where the given base has none.
 */
async function baseWithV1(base: string, apiKey: string | undefined, timeoutMs: number): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return undefined;
  }
  const path = url.pathname.replace(/\/+$/, '');
  const candidates = [`${url.origin}${path}/v1`];
  if (path !== '' && !path.endsWith('/v1')) candidates.push(`${url.origin}/v1`);
  for (const candidate of candidates) {
    try {
      const answer = await getJson(`${candidate}/models`, apiKey, timeoutMs);
      if (answer.status >= 200 && answer.status < 300 && readModelList(answer.body).kind !== 'unknown') {
        return candidate;
      }
    } catch {
      // Not there either: the line says what the given base answered.
    }
  }
  return undefined;
}

/**
 * Asks an OpenAI-compatible endpoint for its model list (cheap, no tokens spent): reachable, the key accepted, and
 * which models it has. A server without /models (404, 405) still counts as reachable, unless the same base with
 * `/v1` answers: then the base is missing it, and every call would 404.
 */
export async function checkEndpoint(
  endpoint: string,
  apiKey: string | undefined,
  timeoutMs: number,
): Promise<EndpointCheck> {
  const base = endpoint.replace(/\/+$/, '');
  const url = `${base}/models`;
  let answer: Answer;
  try {
    answer = await getJson(url, apiKey, timeoutMs);
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${timeoutMs / 1000} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { ok: false, detail: `cannot reach ${url} (${reason})`, models: UNKNOWN };
  }
  const { status } = answer;
  if (status === 401 || status === 403) {
    return {
      ok: false,
      detail: apiKey ? `the key was refused (GET /models: ${status})` : `it wants an API key (GET /models: ${status})`,
      models: UNKNOWN,
    };
  }
  if (answer.page !== undefined && status < 400) {
    const title = answer.page ? ` ("${answer.page}")` : '';
    return {
      ok: false,
      detail:
        `GET /models answered a web page${title}, not the OpenAI API: a proxy or a sign-in page is in the way, ` +
        'or the URL is a web site; set the API address',
      models: UNKNOWN,
    };
  }
  if (status >= 200 && status < 300) {
    const models = readModelList(answer.body);
    const note = models.kind === 'unknown' ? ', not a model list, so the models are not checked' : '';
    return { ok: true, detail: `reachable (GET /models: ${status}${note})`, models };
  }
  if (status === 404 || status === 405) {
    const better = await baseWithV1(base, apiKey, timeoutMs);
    if (better) {
      return {
        ok: false,
        detail: `GET /models answered ${status}, but ${better}/models answers: the base URL lacks /v1`,
        models: UNKNOWN,
        betterBase: better,
      };
    }
    return {
      ok: true,
      detail: `reachable (it has no /models: ${status}, so the models are not checked)`,
      models: UNKNOWN,
    };
  }
  return { ok: false, detail: `GET /models answered ${status}`, models: UNKNOWN };
}
