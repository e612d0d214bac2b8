/** An error a model server reported in a body, whatever its shape. */
export interface WireError {
  readonly message: string;
  /** An HTTP-like status the body carried (`code: 400`, `code: 429`), when it did. */
  readonly status?: number | undefined;
  readonly type?: string | undefined;
  readonly code?: string | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim()) return value.trim();
  return undefined;
}

function statusOf(value: unknown): number | undefined {
  const status = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
}

function fromObject(error: Record<string, unknown>): WireError | undefined {
  const message = text(error.message);
  if (!message) return undefined;
  // OpenRouter names the upstream provider that failed; worth a word.
  const metadata = isRecord(error.metadata) ? error.metadata : undefined;
  const provider = text(metadata?.provider_name);
  const code = error.code;
  return {
    message: provider && !message.includes(provider) ? `${message} (${provider})` : message,
    status: statusOf(code) ?? statusOf(error.status),
    type: text(error.type) ?? text(error.status),
    code: typeof code === 'string' ? code : undefined,
  };
}

/**
 * Reads every documented error shape; undefined when the body is not an error:
 * OpenAI, llama.cpp, OpenRouter `{ error: { message, type?, code? } }`, vLLM `{ object: "error", message, code }`,
 * Ollama and LM Studio `{ error: "..." }`, Gemini's `[{ error: { code, message, status } }]`, FastAPI `{ detail }`.
 */
export function readWireError(body: unknown): WireError | undefined {
  if (Array.isArray(body)) return body.length === 1 ? readWireError(body[0]) : undefined;
  if (!isRecord(body)) return undefined;
  const error = body.error;
  if (typeof error === 'string') return text(error) ? { message: error.trim() } : undefined;
  if (isRecord(error)) return fromObject(error) ?? { message: JSON.stringify(error).slice(0, 200) };
  if (body.object === 'error') return fromObject(body) ?? { message: 'unknown error' };
  const detail = text(body.detail);
  if (detail && !('choices' in body)) return { message: detail };
  return undefined;
}

/** Turns a fetch into one whose non-2xx JSON bodies, of any shape above, read as OpenAI's error shape. */
export function withReadableErrors(fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (response.ok) return response;
    const body = await response.text();
    let wire: WireError | undefined;
    try {
      wire = readWireError(JSON.parse(body));
    } catch {
      wire = undefined;
    }
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    // The SDK reads only `error.message` of a JSON error body; a vLLM or Ollama body would show as "(no body)".
    const normalised = wire
      ? JSON.stringify({ error: { message: wire.message, type: wire.type ?? null, code: wire.code ?? null } })
      : body;
    return new Response(normalised, { status: response.status, statusText: response.statusText, headers });
  };
}

/** The first line of a message, at most 200 characters: errors go into one chat line. */
export function firstLine(message: string): string {
  return (message.split('\n')[0] ?? '').slice(0, 200);
}
