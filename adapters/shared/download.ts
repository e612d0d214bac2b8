/**
 * Fetches an attached file from the platform's own file host only: the URL comes from a payload, so it is checked
 * against the origins the adapter allows (and so is every redirect), credentials go to those origins only, and the
 * body is cut off past the size limit whatever length the server announced.
 */

export interface DownloadOptions {
  /** Origins (`https://files.slack.com`) the file may come from, redirects included. */
  readonly origins: ReadonlySet<string>;
  /** Sent with each request (the bot token, where the host wants one). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly maxBytes: number;
  readonly signal?: AbortSignal | undefined;
  /** Says what is wrong with an answer that is not the file (a login page, say), or undefined when it is. */
  readonly check?: (response: Response) => string | undefined;
}

const MAX_REDIRECTS = 3;

/** The origin of `url` when it is one of `origins`; throws otherwise (or when it is no URL at all). */
export function allowedOrigin(url: string, origins: ReadonlySet<string>): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('the file has no valid address');
  }
  if (!origins.has(parsed.origin)) throw new Error(`files are fetched from the platform only, not ${parsed.host}`);
  return parsed;
}

export async function download(url: string, options: DownloadOptions): Promise<Uint8Array> {
  let target = allowedOrigin(url, options.origins);
  for (let hop = 0; ; hop += 1) {
    const response = await fetch(target, {
      headers: options.headers ?? {},
      redirect: 'manual',
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new Error('too many redirects');
      target = allowedOrigin(new URL(location, target).href, options.origins);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`the file host answered ${response.status}`);
    }
    const problem = options.check?.(response);
    if (problem) {
      await response.body?.cancel();
      throw new Error(problem);
    }
    return readCapped(response, options.maxBytes);
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => new Error(`the file is larger than ${maxBytes} bytes`);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
