/**
 * Secrets never reach a room, the store or the log. Every value the configuration holds as a secret
 * (API keys, platform tokens, signing secrets, passwords and keys inside URLs) and anything shaped
 * like a credential is replaced by `[redacted]` in error text, system messages and log lines.
 */

export const REDACTED = '[redacted]';

/** Shorter values are left to the shape rules: redacting them by value would blank ordinary words. */
const MIN_SECRET_LENGTH = 6;

/** Query parameter names whose values are credentials: `key`, `api-key`, `access_token`, `client_secret`, `sig`... */
const SECRET_PARAM =
  /^(?:[\w.]*[-_])?(?:key|apikey|token|secret|password|passwd|pwd|auth|authorization|sig|signature|credentials?)$/i;

/** `scheme://` and the run of characters after it that may hold `userinfo@host`. */
const URL_START = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s"'<>]*)/gi;

/** A host (name, IPv4 or bracketed IPv6) and port, up to the path: what follows the `@` that ends the userinfo. */
const HOST_AFTER = /^(?:[\w.-]+|\[[\da-f:.]+\])(?::\d*)?(?=[/?#]|$)/i;

/**
 * Where the userinfo of `rest` (what follows `scheme://`) ends: the last `@` followed by a host. A password with an
 * unencoded `@`, `:` or `/` still ends there, so none of it shows; an `@` in a path (`/users/@me`) is no userinfo.
 */
function userinfoEnd(rest: string): number {
  const authority = /^[^/?#]*/.exec(rest)?.[0] ?? '';
  if (!authority.includes('@')) return -1;
  let end = authority.lastIndexOf('@');
  for (let at = rest.indexOf('@', end + 1); at !== -1; at = rest.indexOf('@', at + 1)) {
    if (HOST_AFTER.test(rest.slice(at + 1))) end = at;
  }
  return end;
}

/** `name=value` after `?`, `&`, `;`, a space or a quote: query strings, in URLs or quoted alone. */
const PARAM = /(^|[?&;\s"'(,])([\w.-]+)=([^&#\s"'<>]*)/g;

/** Credential shapes redacted even when they are not among the configured secrets. */
const TOKEN_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED], // OpenAI-style API keys
  [/\bxox[abposre]-[A-Za-z0-9-]{8,}/g, REDACTED], // Slack bot, user and refresh tokens
  [/\bxapp-[A-Za-z0-9-]{8,}/g, REDACTED], // Slack app-level tokens
  [/\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}/g, REDACTED], // Discord bot tokens
  // An Authorization value; the token must hold a digit or symbol, so "Basic authentication" stays readable.
  [/\b(Bearer|Basic)\s+(?=[\w~+/.=-]*[\d~+/.=_-])[\w~+/.-]{8,}=*/g, `$1 ${REDACTED}`],
];

const known = new Set<string>();
/** Each known secret as it may be written: raw, percent-encoded (in a URL), escaped (in a JSON log line); longest first. */
let variants: string[] = [];

function spellings(value: string): string[] {
  return [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)];
}

/** Makes these values known to `redact` for the rest of the process (the configuration calls it once loaded). */
export function rememberSecrets(values: Iterable<string | undefined>): void {
  let added = false;
  for (const value of values) {
    if (value === undefined || value.length < MIN_SECRET_LENGTH || known.has(value)) continue;
    known.add(value);
    added = true;
  }
  if (!added) return;
  variants = [...new Set([...known].flatMap(spellings))].sort((a, b) => b.length - a.length);
}

/**
 * The credentials a URL carries: its password (or a user name standing alone) and secret query values. A database's
 * user name is a role, not a key (`postgres://postgres@db/rt` leans on .pgpass or trust): `userIsSecret: false`
 * keeps it, so the word "postgres" is not blanked everywhere.
 */
export function urlSecrets(url: string, options: { userIsSecret?: boolean } = {}): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const found: string[] = [];
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  if (parsed.password) found.push(decode(parsed.password));
  else if (parsed.username && options.userIsSecret !== false) found.push(decode(parsed.username));
  for (const [name, value] of parsed.searchParams) if (SECRET_PARAM.test(name) && value) found.push(value);
  return found;
}

/** A URL (or text holding URLs) with its credentials replaced: `https://[redacted]@host/v1?api-key=[redacted]`. */
export function redactUrl(text: string): string {
  return text
    .replace(URL_START, (whole, scheme: string, rest: string) => {
      const end = userinfoEnd(rest);
      return end === -1 ? whole : `${scheme}${REDACTED}${rest.slice(end)}`;
    })
    .replace(PARAM, (whole, before: string, name: string, value: string) =>
      value && value !== REDACTED && SECRET_PARAM.test(name) ? `${before}${name}=${REDACTED}` : whole,
    );
}

/** Text with every known secret, URL credential and credential-shaped string replaced by `[redacted]`. */
export function redact(text: string): string {
  let out = text;
  for (const value of variants) if (out.includes(value)) out = out.split(value).join(REDACTED);
  out = redactUrl(out);
  for (const [pattern, replacement] of TOKEN_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
