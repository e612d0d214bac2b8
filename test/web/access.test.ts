import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLOSE_SIGNED_OUT } from '../../adapters/web/protocol.js';
import { until } from '../helpers/until.js';
import { refusedStatus, SocketPage } from './socket-page.js';
import { signIn, startWebHarness, type WebHarness } from './web-harness.js';

let h: WebHarness;
afterEach(async () => h?.close());

/** A GET with headers fetch would not send as given (Host, X-Forwarded-For). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { headers }, (answer) => {
      let body = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => {
        body += chunk;
      });
      answer.on('end', () =>
        resolve({ status: answer.statusCode ?? 0, type: String(answer.headers['content-type']), body }),
      );
    });
    sent.on('error', reject);
    sent.end();
  });
}

const post = (url: string, headers: Record<string, string> = {}, body?: string) =>
  fetch(url, { method: 'POST', headers, redirect: 'manual', ...(body !== undefined ? { body } : {}) });

describe('signing in with a one-time link', () => {
  it('shows whose link it is without using it; a same-origin POST uses it once and sets an HttpOnly, SameSite=Strict session', async () => {
    h = await startWebHarness();
    const link = await h.invite('ana');
    // Fetched twice (a link preview, a mail scanner): nothing is used.
    for (let i = 0; i < 2; i++) {
      const page = await fetch(link);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('Sign in as ana');
      expect(html).toMatch(/<form method="post" action="\/signin\/[A-Za-z0-9_-]{43}">/);
    }
    const answer = await post(link, { origin: h.url });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/');
    const cookie = answer.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^roundtable=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=2592000; HttpOnly; SameSite=Strict$/);
    const me = await fetch(`${h.url}/api/me`, { headers: { cookie: cookie.split(';')[0] ?? '' } });
    expect(await me.json()).toMatchObject({ name: 'ana', operator: false, rooms: ['general', 'ops-room'] });
    // Used: the link shows nothing and signs nobody in again.
    expect((await fetch(link)).status).toBe(404);
    const again = await post(link, { origin: h.url });
    expect(again.status).toBe(404);
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a sign-in POST from another site, and links that expired or were made up', async () => {
    h = await startWebHarness();
    const link = await h.invite('ana');
    expect((await post(link, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(link)).status).toBe(403); // no Origin at all
    expect((await fetch(link)).status).toBe(200); // still unused
    await h.store.people.invite({ name: 'ben', operator: false }, 'x'.repeat(64), 0, 1000);
    expect((await fetch(`${h.url}/signin/${'A'.repeat(43)}`)).status).toBe(404);
    expect((await fetch(`${h.url}/signin/not-a-code`)).status).toBe(404);
  });

  it('expires a link after an hour', async () => {
    h = await startWebHarness();
    const { inviteLink } = await import('../../adapters/web/invite-cli.js');
    const old = await inviteLink(h.store.people, { name: 'ana', operator: false }, h.url, Date.now() - 61 * 60_000);
    expect((await fetch(old)).status).toBe(404);
    expect((await post(old, { origin: h.url })).status).toBe(404);
  });

  it('makes the session cookie Secure and host-bound when WEB_PUBLIC_URL is https, and takes POSTs from that origin only', async () => {
    h = await startWebHarness({ env: { WEB_PUBLIC_URL: 'https://chat.example.org/' } });
    const link = await h.invite('ana');
    expect((await post(link, { origin: h.url })).status).toBe(403);
    const answer = await post(link, { origin: 'https://chat.example.org' });
    expect(answer.headers.get('set-cookie')).toMatch(
      /^__Host-roundtable=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict; Secure$/,
    );
  });

  it('lets a session last WEB_SESSION_DAYS', async () => {
    h = await startWebHarness({ env: { WEB_SESSION_DAYS: '2' } });
    const answer = await post(await h.invite('ana'), { origin: h.url });
    expect(answer.headers.get('set-cookie')).toContain('Max-Age=172800;');
  });

  it('ends a session unused for WEB_SESSION_IDLE_HOURS, and keeps one in use', async () => {
    let now = Date.now();
    h = await startWebHarness({ env: { WEB_SESSION_IDLE_HOURS: '2' }, clock: () => now });
    const idle = await signIn(await h.invite('ana'));
    const used = await signIn(await h.invite('ben'));
    const me = (cookie: string) => fetch(`${h.url}/api/me`, { headers: { cookie } });
    now += 90 * 60_000;
    expect((await me(used)).status).toBe(200);
    now += 90 * 60_000;
    expect((await me(used)).status).toBe(200);
    expect((await me(idle)).status).toBe(401);
  });

  it('limits sign-in attempts from one address', async () => {
    h = await startWebHarness();
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) statuses.push((await fetch(`${h.url}/signin/${'B'.repeat(43)}`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 404)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
  });

  it('signs out: the session ends, the cookie goes and the open pages of that session close', async () => {
    h = await startWebHarness();
    const cookie = await signIn(await h.invite('ana'));
    const page = await SocketPage.open(h.url, cookie);
    const answer = await post(`${h.url}/signout`, { origin: h.url, cookie });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('set-cookie')).toMatch(/^roundtable=; Path=\/; Max-Age=0;/);
    await until(() => page.closed !== undefined);
    expect(page.closed?.code).toBe(CLOSE_SIGNED_OUT);
    expect(page.frames.at(-1)).toEqual({ type: 'bye', reason: 'You signed out.' });
    expect((await fetch(`${h.url}/api/me`, { headers: { cookie } })).status).toBe(401);
  });
});

describe('sessions, operators and origins', () => {
  it('refuses every page, API call and socket without a session', async () => {
    h = await startWebHarness();
    for (const where of ['/', '/room/general', '/ops']) {
      const page = await fetch(`${h.url}${where}`, { redirect: 'manual' });
      expect([where, page.status]).toEqual([where, 401]);
      expect(await page.text()).toContain('You are not signed in');
    }
    for (const where of ['/api/me', '/api/rooms/general/history?before=5', '/api/ops/overview', '/api/ops/messages']) {
      expect([where, (await fetch(`${h.url}${where}`)).status]).toEqual([where, 401]);
    }
    expect((await post(`${h.url}/api/rooms/general/files?name=a.txt`, { origin: h.url }, 'x')).status).toBe(401);
    const forged = { cookie: `roundtable=${'C'.repeat(43)}`, origin: h.url };
    expect((await fetch(`${h.url}/api/me`, { headers: forged })).status).toBe(401);
    expect(await refusedStatus(h.url, { origin: h.url })).toBe(401);
    expect(await refusedStatus(h.url, forged)).toBe(401);
  });

  it('answers an address of a room that is not there with the rooms there are', async () => {
    h = await startWebHarness();
    const cookie = await signIn(await h.invite('ana'));
    const page = await fetch(`${h.url}/room/nowhere`, { headers: { cookie } });
    expect(page.status).toBe(404);
    const html = await page.text();
    expect(html).toContain('<a href="/room/general">#general</a>');
    expect(html).toContain('<a href="/room/ops-room">#ops-room</a>');
    expect(await refusedStatus(h.url, { cookie, origin: h.url }, 'nowhere')).toBe(404);
  });

  it('keeps the operator console and its API for operators', async () => {
    h = await startWebHarness();
    const person = await signIn(await h.invite('ben'));
    const operator = await signIn(await h.invite('ana', { operator: true }));
    expect((await fetch(`${h.url}/ops`, { headers: { cookie: person } })).status).toBe(403);
    expect((await fetch(`${h.url}/api/ops/overview`, { headers: { cookie: person } })).status).toBe(403);
    const command = JSON.stringify({ room: 'web:general', name: 'pass' });
    expect((await post(`${h.url}/api/ops/command`, { cookie: person, origin: h.url }, command)).status).toBe(403);
    const page = await fetch(`${h.url}/ops`, { headers: { cookie: operator } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Operator console');
    const overview = await fetch(`${h.url}/api/ops/overview`, { headers: { cookie: operator } });
    expect((await overview.json()).agents.map((a: { agent: string }) => a.agent)).toEqual(['code', 'data', 'reviewer']);
  });

  it('shows a person who is not an operator a small page at /ops, not an API error', async () => {
    h = await startWebHarness();
    const person = await signIn(await h.invite('ben'));
    const page = await fetch(`${h.url}/ops`, { headers: { cookie: person } });
    expect(page.status).toBe(403);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const body = await page.text();
    expect(body).toContain('The operator console is for operators.');
    expect(body).toContain('href="/room/general"');
    expect(body).not.toContain('{"error"');
  });

  it('answers only to its own host names: WEB_PUBLIC_URL, loopback names and addresses (no DNS rebinding)', async () => {
    h = await startWebHarness({ env: { WEB_PUBLIC_URL: 'https://chat.example.org' } });
    const signedIn = await post(await h.invite('ana'), { origin: 'https://chat.example.org' });
    const cookie = signedIn.headers.get('set-cookie')?.split(';')[0] ?? '';
    const port = new URL(h.url).port;
    const room = `${h.url}/room/general`;
    const rebound = await rawGet(room, { host: `evil.example:${port}`, cookie });
    expect(rebound.status).toBe(421);
    expect(rebound.type).toBe('text/html; charset=utf-8');
    expect(rebound.body).toContain('WEB_PUBLIC_URL');
    expect((await rawGet(`${h.url}/signin/${'B'.repeat(43)}`, { host: 'evil.example' })).status).toBe(421);
    expect((await rawGet(`${h.url}/api/me`, { host: 'localhost.evil.example', cookie })).status).toBe(421);
    expect(await refusedStatus(h.url, { cookie, origin: 'https://chat.example.org', host: 'evil.example' })).toBe(421);
    for (const host of [
      'chat.example.org',
      'CHAT.example.org:443',
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      '[::1]:80',
    ])
      expect((await rawGet(room, { host, cookie })).status, host).toBe(200);
  });

  it('limits sign-in per client address behind the proxies WEB_TRUST_PROXY names, and believes no one else', async () => {
    h = await startWebHarness({ env: { WEB_TRUST_PROXY: '127.0.0.1' } });
    const attempt = (forwarded: string) =>
      rawGet(`${h.url}/signin/${'B'.repeat(43)}`, { 'x-forwarded-for': forwarded }).then((a) => a.status);
    const guesser: number[] = [];
    for (let i = 0; i < 22; i++) guesser.push(await attempt('10.0.0.1, 203.0.113.9'));
    expect(guesser.slice(20)).toEqual([429, 429]);
    // Another person behind the same proxy is not held back by the guesser.
    expect(await attempt('198.51.100.7')).toBe(404);
    await h.close();
    h = await startWebHarness();
    const spoofed: number[] = [];
    for (let i = 0; i < 22; i++) spoofed.push(await attempt(`198.51.100.${i}`));
    expect(spoofed.slice(20)).toEqual([429, 429]);
  });

  it('refuses requests from another site, session or not', async () => {
    h = await startWebHarness();
    const cookie = await signIn(await h.invite('ana', { operator: true }));
    const evil = { cookie, origin: 'https://evil.example' };
    expect((await post(`${h.url}/api/rooms/general/files?name=a.txt`, evil, 'x')).status).toBe(403);
    expect((await post(`${h.url}/api/ops/command`, evil, '{"room":"web:general","name":"pass"}')).status).toBe(403);
    expect((await post(`${h.url}/api/rooms/general/files?name=a.txt`, { cookie }, 'x')).status).toBe(403);
    expect((await fetch(`${h.url}/api/me`, { headers: { cookie, 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
    expect(await refusedStatus(h.url, evil)).toBe(403);
    expect(await refusedStatus(h.url, { cookie })).toBe(403);
  });

  it('serves its pages under a Content-Security-Policy without inline script, and no page of it holds any', async () => {
    h = await startWebHarness();
    const cookie = await signIn(await h.invite('ana', { operator: true }));
    for (const where of ['/room/general', '/ops', '/static/room.js', '/api/me']) {
      const answer = await fetch(`${h.url}${where}`, { headers: { cookie } });
      const policy = answer.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("script-src 'self'");
      expect(policy).toContain("default-src 'none'");
      expect(policy).not.toContain('unsafe-inline');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const dir = path.resolve(import.meta.dirname, '../../adapters/web/public');
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.html'))) {
      const html = readFileSync(path.join(dir, file), 'utf8');
      expect(html.match(/<script(?![^>]*\bsrc=)[^>]*>/g), file).toBeNull();
      expect(html.match(/\son[a-z]+\s*=/gi), file).toBeNull();
      expect(html.match(/style\s*=/gi), file).toBeNull();
    }
    // The page's modules never hand text to the HTML parser.
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.js'))) {
      const source = readFileSync(path.join(dir, file), 'utf8');
      expect(
        source.match(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/g),
        file,
      ).toBeNull();
    }
  });

  it('sends no token or secret to a page', async () => {
    h = await startWebHarness({
      agents: [{ name: 'code', discord: { token: 'discord-token-123', control: true } }, { name: 'data' }],
    });
    h.llm.respond(() => ({ content: 'hello' }));
    const cookie = await signIn(await h.invite('ana', { operator: true }));
    const page = await SocketPage.open(h.url, cookie);
    page.post({ id: 'post-0000001', text: '@code hi' });
    await page.next('event', (f) => f.event.kind === 'message' && f.event.message.role === 'agent');
    page.post({ id: 'post-0000002', text: '/status' });
    await page.next('notice');
    const seen = [
      JSON.stringify(page.frames),
      ...(await Promise.all(
        ['/api/me', '/api/ops/overview', '/api/ops/messages?room=web:general', '/room/general', '/ops'].map(async (w) =>
          (await fetch(`${h.url}${w}`, { headers: { cookie } })).text(),
        ),
      )),
    ].join('\n');
    expect(seen).toContain('hello');
    for (const secret of ['test-key', 'discord-token-123', cookie.split('=')[1] ?? ''])
      expect(seen).not.toContain(secret);
  });
});
