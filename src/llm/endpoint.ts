/** An endpoint URL as the OpenAI SDK needs it: no credentials and no query inside the base URL. */
export interface Endpoint {
  /** The URL without user, password, query or fragment. */
  readonly baseURL: string;
  /** The URL's query parameters (`?api-key=`, `?api-version=`), sent with every request. */
  readonly query: Readonly<Record<string, string>>;
  /** `Basic ...` from `user:password@` in the URL (a proxy's login); it replaces the Bearer key. */
  readonly authorization: string | undefined;
}

/**
 * Splits `https://user:pass@host/v1?api-key=...` for the SDK: fetch refuses URLs with credentials
 * (and its error would echo them), and the SDK appends paths after the query otherwise.
 */
export function parseEndpoint(url: string): Endpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { baseURL: url, query: {}, authorization: undefined };
  }
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  const query = Object.fromEntries(parsed.searchParams);
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return {
    baseURL: parsed.toString(),
    query,
    authorization:
      user || password ? `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}` : undefined,
  };
}
