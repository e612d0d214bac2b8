import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLOSE_SIGNED_OUT } from '../../adapters/web/protocol.js';
import { agentOf } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { SocketPage } from './socket-page.js';
import { signIn, startWebHarness, type WebHarness } from './web-harness.js';

let h: WebHarness;
afterEach(async () => h?.close());

async function people(...names: Array<[string, boolean?]>): Promise<string[]> {
  const cookies: string[] = [];
  for (const [name, operator] of names)
    cookies.push(await signIn(await h.invite(name, { operator: operator ?? false })));
  return cookies;
}

describe('a web room over its socket', () => {
  it("shows a person's message to everyone in the room at once, and an agent's reply as it is written, under one id", async () => {
    h = await startWebHarness();
    h.llm.respond(() => ({ content: 'Here is the answer, written in several pieces.', chunkDelayMs: 20 }));
    const [ana, ben] = await people(['ana'], ['ben']);
    const a = await SocketPage.open(h.url, ana ?? '');
    const b = await SocketPage.open(h.url, ben ?? '');
    expect(a.frames[0]).toMatchObject({ type: 'welcome', room: 'general', me: { name: 'ana', operator: false } });
    a.post({ id: 'first-post-1', text: '@code what is the answer?' });
    const shown = await b.next('event', (f) => f.event.kind === 'message');
    expect(shown.event).toMatchObject({
      kind: 'message',
      message: { author: 'ana', role: 'human', text: '@code what is the answer?' },
    });
    await a.next('ack', (f) => f.id === 'first-post-1');
    const final = await b.next('event', (f) => f.event.kind === 'message' && f.event.message.role === 'agent');
    const streamed = b.events().filter((f) => f.event.kind === 'stream');
    expect(streamed.length).toBeGreaterThan(1);
    const id = final.event.kind === 'message' ? final.event.message.id : '';
    expect(streamed.every((f) => f.event.kind === 'stream' && f.event.id === id && f.event.agent === 'code')).toBe(
      true,
    );
    expect(final.event).toMatchObject({
      message: { author: 'code', text: 'Here is the answer, written in several pieces.' },
    });
    // Numbers only grow, and each page saw the same events.
    expect(b.events().map((f) => f.n)).toEqual(a.events().map((f) => f.n));
  });

  it('takes a post sent again (after a reconnect) once', async () => {
    h = await startWebHarness();
    h.llm.respond(() => ({ content: 'once' }));
    const [ana] = await people(['ana']);
    const first = await SocketPage.open(h.url, ana ?? '');
    first.post({ id: 'same-post-1', text: '@code hi' });
    await first.next('ack');
    await h.bridge.idle();
    await first.close();
    const again = await SocketPage.open(h.url, ana ?? '');
    again.post({ id: 'same-post-1', text: '@code hi' });
    await again.next('ack');
    await h.bridge.idle();
    expect(again.messageIds()).toEqual([]);
    expect(h.llm.requests).toHaveLength(1);
    const stored = (await h.bridge.sink.transcript?.('web:general', { limit: 10 })) ?? [];
    expect(stored.map((m) => m.text)).toEqual(['@code hi', 'once']);
  });

  it('brings a page back after a drop with exactly the events it missed, and loads it afresh from another run', async () => {
    h = await startWebHarness();
    const [ana, ben] = await people(['ana'], ['ben']);
    const a = await SocketPage.open(h.url, ana ?? '');
    const b = await SocketPage.open(h.url, ben ?? '');
    b.post({ id: 'before-drop', text: 'one' });
    await a.next('event');
    const welcome = a.frames[0];
    const seen = a.events().at(-1)?.n ?? 0;
    await a.close();
    b.post({ id: 'during-drop-1', text: 'two' });
    b.post({ id: 'during-drop-2', text: 'three' });
    await b.next('ack', (f) => f.id === 'during-drop-2');
    const epoch = welcome?.type === 'welcome' ? welcome.epoch : '';
    const back = await SocketPage.open(h.url, ana ?? '', { query: `&epoch=${epoch}&after=${seen}` });
    await until(() => back.events().length === 2);
    expect(back.frames[0]).toEqual({ type: 'resume', epoch, n: seen + 2, beat: 20_000 });
    expect(back.events().map((f) => (f.event.kind === 'message' ? f.event.message.text : ''))).toEqual([
      'two',
      'three',
    ]);
    // A page from another run of the bridge (or away too long) gets the room afresh, from the store.
    const fresh = await SocketPage.open(h.url, ana ?? '', { query: '&epoch=other-run&after=2' });
    expect(fresh.frames[0]).toMatchObject({ type: 'welcome' });
    const messages = fresh.frames[0]?.type === 'welcome' ? fresh.frames[0].messages : [];
    expect(messages.map((m) => m.text)).toEqual(['one', 'two', 'three']);
  });

  it('answers commands typed in the box to the person alone: operators carry them out, others are told they cannot', async () => {
    h = await startWebHarness();
    const [ana, ben] = await people(['ana', true], ['ben']);
    const a = await SocketPage.open(h.url, ana ?? '');
    const b = await SocketPage.open(h.url, ben ?? '');
    b.post({ id: 'ben-command', text: '/pass' });
    expect((await b.next('notice')).text).toBe('Only operators can use /pass.');
    a.post({ id: 'ana-command', text: '/status' });
    expect((await a.next('notice')).text).toMatch(/^Room web:general\nWorking: nobody\n/);
    a.post({ id: 'ana-unknown', text: '/frobnicate now' });
    expect((await a.next('notice', (f) => f.text.startsWith('Unknown'))).text).toBe(
      'Unknown command /frobnicate. Commands: /help, /status, /pass, /reset, /privacy, /budget.',
    );
    // A path is a message, not a command.
    a.post({ id: 'ana-path', text: '/tmp/report.csv is ready' });
    await b.next('event', (f) => f.event.kind === 'message' && f.event.message.text === '/tmp/report.csv is ready');
    expect(a.frames.filter((f) => f.type === 'notice')).toHaveLength(2);
    // A command sent again (its page reconnected before the answer came) is not carried out twice.
    a.post({ id: 'ana-command', text: '/status' });
    await until(() => a.frames.filter((f) => f.type === 'ack' && f.id === 'ana-command').length === 2);
    expect(a.frames.filter((f) => f.type === 'notice')).toHaveLength(2);
    expect(b.frames.filter((f) => f.type === 'notice')).toHaveLength(1);
  });

  it("saves a file uploaded with a message into the room's workspace, under uploads/", async () => {
    h = await startWebHarness({ env: { WEB_MAX_FILE_MB: '1' } });
    h.llm.respond(() => ({ content: 'got it' }));
    const [ana] = await people(['ana']);
    const page = await SocketPage.open(h.url, ana ?? '');
    const upload = await fetch(`${h.url}/api/rooms/general/files?name=${encodeURIComponent('../sales.csv')}`, {
      method: 'POST',
      headers: { cookie: ana ?? '', origin: h.url, 'content-type': 'text/csv' },
      body: 'region,total\nnorth,12\n',
    });
    expect(upload.status).toBe(201);
    const { file } = (await upload.json()) as { file: string };
    page.post({ id: 'with-a-file', text: '@code the numbers', files: [file] });
    await page.next('ack');
    await h.bridge.idle();
    const workspace = h.sandbox.workspaceDir?.('web:general') ?? '';
    expect(readFileSync(path.join(workspace, 'uploads', 'sales.csv'), 'utf8')).toBe('region,total\nnorth,12\n');
    const stored = (await h.bridge.sink.transcript?.('web:general', { limit: 1 })) ?? [];
    expect(h.llm.requests[0]?.messages.map((m) => String(m.content)).join('\n')).toContain(
      '[file: uploads/sales.csv (text/csv, 22 B)]',
    );
    expect(stored.length).toBe(1);
    // Too large: refused before anything is held; a file id of someone else's is refused too.
    const big = await fetch(`${h.url}/api/rooms/general/files?name=big.bin`, {
      method: 'POST',
      headers: { cookie: ana ?? '', origin: h.url },
      body: new Uint8Array(1024 * 1024 + 1),
    });
    expect(big.status).toBe(413);
    page.post({ id: 'not-my-file', text: 'this', files: ['00000000-0000-0000-0000-000000000000'] });
    expect((await page.next('refused')).reason).toMatch(/no longer held/);
  });

  it('refuses posts from a person who sends too fast, and says so', async () => {
    h = await startWebHarness();
    const [ana] = await people(['ana']);
    const page = await SocketPage.open(h.url, ana ?? '');
    for (let i = 0; i < 14; i++) page.post({ id: `quick-post-${i}`, text: `message ${i}` });
    await until(() => page.frames.filter((f) => f.type === 'ack' || f.type === 'refused').length === 14);
    const refused = page.frames.filter((f) => f.type === 'refused');
    expect(refused.length).toBeGreaterThanOrEqual(3);
    expect(refused[0]).toMatchObject({ reason: expect.stringMatching(/too fast/) });
    // Commands count too (a /status asks the sandbox).
    page.post({ id: 'quick-command', text: '/status' });
    expect((await page.next('refused', (f) => f.id === 'quick-command')).reason).toMatch(/too fast/);
  });

  it('closes the open pages of a person whose sessions are revoked, and refuses them after', async () => {
    h = await startWebHarness();
    const [ana, ben] = await people(['ana'], ['ben']);
    const a = await SocketPage.open(h.url, ana ?? '');
    const b = await SocketPage.open(h.url, ben ?? '');
    expect(await h.store.people.revoke('ANA')).toBe(1);
    await until(() => a.closed !== undefined);
    expect(a.closed?.code).toBe(CLOSE_SIGNED_OUT);
    expect(a.frames.at(-1)).toMatchObject({ type: 'bye', reason: expect.stringMatching(/session ended/) });
    expect(b.closed).toBeUndefined();
    expect((await fetch(`${h.url}/api/me`, { headers: { cookie: ana ?? '' } })).status).toBe(401);
  });

  it('beats every page, and ends a connection that stopped answering pings', async () => {
    h = await startWebHarness({ beatMs: 150 });
    const [ana, ben] = await people(['ana'], ['ben']);
    const alive = await SocketPage.open(h.url, ana ?? '');
    const dead = await SocketPage.open(h.url, ben ?? '', { autoPong: false });
    expect(alive.frames[0]).toMatchObject({ type: 'welcome', beat: 150 });
    await until(() => dead.closed !== undefined);
    expect(dead.closed?.code).toBe(1006);
    expect(alive.frames.filter((f) => f.type === 'beat').length).toBeGreaterThanOrEqual(2);
    expect(alive.closed).toBeUndefined();
  });

  it('loads older messages a page at a time', async () => {
    h = await startWebHarness();
    const [ana] = await people(['ana']);
    // Sixty messages stored as the room stores any (faster than a person may post them).
    for (let i = 1; i <= 60; i++) {
      await h.bridge.sink.receive({
        platform: 'web',
        channel: 'general',
        messageId: `h.history.${i}`,
        author: { id: 'web:ana', name: 'ana', kind: 'human' },
        text: `m${i}`,
      });
    }
    const fresh = await SocketPage.open(h.url, ana ?? '');
    const welcome = fresh.frames[0];
    if (welcome?.type !== 'welcome') throw new Error('no welcome');
    expect(welcome.messages.map((m) => m.text)).toEqual(Array.from({ length: 50 }, (_, i) => `m${i + 11}`));
    const older = await fetch(`${h.url}/api/rooms/general/history?before=${welcome.older}`, {
      headers: { cookie: ana ?? '' },
    });
    const page2 = (await older.json()) as { messages: Array<{ text: string }>; older: number | null };
    expect(page2.messages.map((m) => m.text)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i + 1}`));
    expect(page2.older).toBeNull();
  });
});

describe("the operator console's commands", () => {
  it('carries out /pass, /privacy and /reset in any room as an operator, and the overview shows it', async () => {
    h = await startWebHarness();
    h.llm.respond((request) => (agentOf(request) === 'code' ? { hang: true } : { content: 'x' }));
    const [ana] = await people(['ana', true]);
    const page = await SocketPage.open(h.url, ana ?? '');
    page.post({ id: 'long-turn-1', text: '@code take your time' });
    await until(() => h.llm.requests.length === 1);
    const command = async (name: string, args = '') => {
      const answer = await fetch(`${h.url}/api/ops/command`, {
        method: 'POST',
        headers: { cookie: ana ?? '', origin: h.url, 'content-type': 'application/json' },
        body: JSON.stringify({ room: 'web:general', name, args }),
      });
      return ((await answer.json()) as { answer: string }).answer;
    };
    expect(await command('pass')).toBe('Control is with the humans (1 agent turn stopped).');
    expect(await command('privacy', 'mentions')).toMatch(/^Privacy in this room: mentions\./);
    const overview = await (await fetch(`${h.url}/api/ops/overview`, { headers: { cookie: ana ?? '' } })).json();
    expect(overview.rooms[0]).toMatchObject({
      key: 'web:general',
      control: { holder: 'humans', reason: '/pass' },
      privacy: 'mentions',
      working: [],
    });
    expect(overview.online).toEqual({ general: ['ana'], 'ops-room': [] });
    expect(await command('reset')).toMatch(/^Room reset/);
  });
});
