/**
 * Sign-in without passwords, and sessions. `npm run web:invite` gives a person a one-time link; opening it only
 * shows "Sign in as <name>" (a link preview or a mail scanner that fetches it uses nothing); the page's own form
 * POSTs back, which uses the code and sets the session cookie. Sessions live in the store and last
 * WEB_SESSION_DAYS, or until unused for WEB_SESSION_IDLE_HOURS (an open page uses its session); signing out ends one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PeoplePort, WebIdentity } from '../../src/store/port.js';
import { cookieName, escapeHtml, readCookie, send, sessionCookie } from './http.js';
import { digest, looksLikeSecret, newSecret } from './secrets.js';

/** Someone signed in: who, and the digest of their session's token (their connections are found by it). */
export interface Viewer extends WebIdentity {
  readonly session: string;
}

export interface AccessOptions {
  readonly people: PeoplePort;
  readonly sessionDays: number;
  /** A session unused this long ends (WEB_SESSION_IDLE_HOURS). */
  readonly idleHours: number;
  /** The room is served over https (WEB_PUBLIC_URL): the cookie is Secure. */
  readonly secure: boolean;
  readonly clock: () => number;
}

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

export class Access {
  private readonly cookie: string;

  constructor(private readonly options: AccessOptions) {
    this.cookie = cookieName(options.secure);
  }

  /** Who the request's session cookie belongs to; undefined without a valid session. */
  async viewer(request: IncomingMessage): Promise<Viewer | undefined> {
    const token = readCookie(request, this.cookie);
    if (!token || !looksLikeSecret(token)) return undefined;
    const session = digest(token);
    const who = await this.identity(session);
    return who ? { ...who, session } : undefined;
  }

  /** Whether a session is still open (revoked and expired ones are not). */
  async stillOpen(session: string): Promise<boolean> {
    return (await this.identity(session)) !== undefined;
  }

  /** Who a session is now (an operator or not, as the store says); undefined once it ended. */
  identity(session: string): Promise<WebIdentity | undefined> {
    const now = this.options.clock();
    return this.options.people.session(session, now, now - this.options.idleHours * HOUR_MS);
  }

  /** GET /signin/<code>: says whose link it is and offers the button; uses nothing. */
  async page(response: ServerResponse, code: string): Promise<void> {
    const who = looksLikeSecret(code)
      ? await this.options.people.invited(digest(code), this.options.clock())
      : undefined;
    if (!who) {
      send(response, 404, invalidLinkPage(), 'text/html; charset=utf-8');
      return;
    }
    send(response, 200, signInPage(code, who.name), 'text/html; charset=utf-8');
  }

  /** POST /signin/<code> (same origin, checked before): uses the code, opens a session, sets its cookie. */
  async signIn(response: ServerResponse, code: string): Promise<WebIdentity | undefined> {
    const now = this.options.clock();
    const token = newSecret();
    const maxAgeMs = this.options.sessionDays * DAY_MS;
    const who = looksLikeSecret(code)
      ? await this.options.people.redeem(digest(code), digest(token), now, now + maxAgeMs)
      : undefined;
    if (!who) {
      send(response, 404, invalidLinkPage(), 'text/html; charset=utf-8');
      return undefined;
    }
    send(response, 303, '', 'text/plain', {
      location: '/',
      'set-cookie': sessionCookie(this.cookie, token, Math.floor(maxAgeMs / 1000), this.options.secure),
    });
    return who;
  }

  /** POST /signout: ends the session and removes the cookie. */
  async signOut(response: ServerResponse, viewer: Viewer | undefined): Promise<void> {
    if (viewer) await this.options.people.endSession(viewer.session);
    send(response, 303, '', 'text/plain', {
      location: '/',
      'set-cookie': sessionCookie(this.cookie, '', 0, this.options.secure),
    });
  }
}

/** A page of the server's own, with the room's style sheet and no script. */
export function plainPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Roundtable</title>
<link rel="stylesheet" href="/static/style.css">
</head>
<body class="plain">
<main class="card">
<h1>Roundtable</h1>
${body}
</main>
</body>
</html>
`;
}

function signInPage(code: string, name: string): string {
  return plainPage(
    'Sign in',
    `<p>This link signs you in to the web room. It works once, within an hour of being made.</p>
<form method="post" action="/signin/${escapeHtml(code)}">
<button type="submit" class="primary">Sign in as ${escapeHtml(name)}</button>
</form>`,
  );
}

function invalidLinkPage(): string {
  return plainPage(
    'Sign-in link not valid',
    `<p>This sign-in link is not valid: it was used already, it expired (links last an hour), or it is not
complete. Ask an operator for a new one.</p>`,
  );
}

/** What someone without a session sees. */
export function signedOutPage(): string {
  return plainPage(
    'Not signed in',
    `<p>You are not signed in. Ask an operator for a sign-in link
(<code>npm run web:invite -- &lt;your name&gt;</code>).</p>`,
  );
}

/** What a person who is not an operator sees at /ops. */
export function notOperatorPage(room: string): string {
  return plainPage(
    'Operators only',
    `<p>The operator console is for operators. An operator can make you one
(<code>npm run web:invite -- &lt;your name&gt; --operator</code>).</p>
<p><a href="/room/${escapeHtml(room)}">Back to the room</a></p>`,
  );
}

/** A request sent to a name that is not the room's (DNS rebinding, or WEB_PUBLIC_URL not set to the address used). */
export function wrongHostPage(): string {
  return plainPage(
    'Not this address',
    `<p>The web room answers only at its own address: the one in <code>WEB_PUBLIC_URL</code>, <code>localhost</code>
or an IP address. Whoever runs the bridge sets <code>WEB_PUBLIC_URL</code> to the address people open.</p>`,
  );
}

/** A room name that is not in WEB_ROOMS: the rooms there are. */
export function noSuchRoomPage(rooms: readonly string[]): string {
  const links = rooms.map((room) => `<li><a href="/room/${escapeHtml(room)}">#${escapeHtml(room)}</a></li>`).join('');
  return plainPage('No such room', `<p>There is no such room here. The rooms:</p><ul>${links}</ul>`);
}
