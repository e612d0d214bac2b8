/**
 * What every answer of the web room's server shares: the security headers (a Content-Security-Policy without inline
 * script, no framing, no sniffing, no referrer to other sites), the session cookie, the origin check that refuses cross-site
 * requests, and reading a body with a size limit.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';

/** Scripts, styles and connections from this origin only; nothing inline, nothing framed, forms post here only. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: under it a browser sends `Origin: null` with a same-origin POST, and the origin check needs it.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** Answers with the security headers, a status and a body. */
export function send(
  response: ServerResponse,
  status: number,
  body: string | Uint8Array,
  type: string,
  headers: Readonly<Record<string, string | string[]>> = {},
): void {
  if (response.headersSent) return;
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, ...headers });
  response.end(body);
}

export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

/** An API error: `{ error }` with a status. */
export function refuse(response: ServerResponse, status: number, error: string): void {
  sendJson(response, status, { error });
}

/** The session cookie's name: `__Host-` (bound to this host, https only) when the room is served over https. */
export function cookieName(secure: boolean): string {
  return secure ? '__Host-roundtable' : 'roundtable';
}

/** The value of one cookie of the request. */
export function readCookie(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie of a session: HttpOnly, SameSite=Strict, Secure over https; `maxAgeS` 0 removes it. */
export function sessionCookie(name: string, value: string, maxAgeS: number, secure: boolean): string {
  return [
    `${name}=${value}`,
    'Path=/',
    `Max-Age=${maxAgeS}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/**
 * Whether a request comes from a page of this room's own origin. A request that changes something (a POST, a
 * WebSocket) must say where it comes from (`Origin`) and that must be here; any request a browser marks cross-site
 * (`Sec-Fetch-Site`) is refused.
 */
export function sameOrigin(request: IncomingMessage, publicOrigin: string | undefined, changes: boolean): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') return false;
  const origin = request.headers.origin;
  if (origin === undefined) return !changes;
  return origin === expectedOrigin(request, publicOrigin);
}

/** The origin pages of the room have: WEB_PUBLIC_URL's, else the address the request was sent to. */
export function expectedOrigin(request: IncomingMessage, publicOrigin: string | undefined): string {
  return publicOrigin ?? `http://${request.headers.host ?? ''}`;
}

/**
 * The client's address, for rate limits: the socket's, unless that is a reverse proxy named in WEB_TRUST_PROXY; then
 * the nearest address in X-Forwarded-For that is not such a proxy (what the proxies before it appended, never what
 * the client wrote at the start).
 */
export function clientAddress(request: IncomingMessage, trustedProxies: ReadonlySet<string>): string {
  let address = plainAddress(request.socket.remoteAddress ?? 'unknown');
  if (!trustedProxies.has(address)) return address;
  const forwarded = String(request.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((hop) => plainAddress(hop.trim()))
    .filter((hop) => hop.length > 0);
  for (let i = forwarded.length - 1; i >= 0; i--) {
    address = forwarded[i] ?? address;
    if (!trustedProxies.has(address)) return address;
  }
  return address;
}

/** An IPv4 address as itself, not IPv4-mapped IPv6 (`::ffff:127.0.0.1`). */
export function plainAddress(address: string): string {
  return address.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
}

/** Names a browser on this machine uses for it. */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

/** The host name of a Host header, lower case, without its port or brackets; undefined without a valid one. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  try {
    return new URL(`http://${header}`).hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  } catch {
    return undefined;
  }
}

/**
 * Whether a request was sent to one of the room's own names (against DNS rebinding, where a page of another site
 * reaches the room under that site's name): WEB_PUBLIC_URL's host, a loopback name, or an address (a browser sends
 * an address as Host only when it was opened by that address).
 */
export function ownHost(request: IncomingMessage, publicHost: string | undefined): boolean {
  const name = hostName(request.headers.host);
  if (name === undefined) return false;
  return name === publicHost || LOOPBACK_NAMES.has(name) || isIP(name) !== 0;
}

/** A body too large to read. */
export class TooLarge extends Error {
  constructor(readonly limit: number) {
    super(`larger than ${limit} bytes`);
  }
}

/** Reads a request's body, at most `limit` bytes (whatever Content-Length says). */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  if (Number(request.headers['content-length'] ?? 0) > limit) {
    request.resume();
    throw new TooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      request.resume();
      throw new TooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Escapes text for HTML (the server's few pages are built from strings; every value goes through this). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
