/**
 * The web room under hostile input, with the bridge as its own process (a crash ends it, as it would end Discord and
 * Slack): oversized, fragmented, binary and invalid-UTF-8 frames, random JSON and random bytes at the socket (the `ws`
 * client and raw TCP), and malformed, huge, mistyped and never-finished requests at the HTTP API. The bridge stays up,
 * each bad socket is closed with the code that says why, and another person's page and the Discord room go on.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inviteLink } from '../../adapters/web/invite-cli.js';
import { openStore } from '../../src/store/index.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { type BridgeChild, startBridgeChild, writeAnsweringAgent } from '../helpers/bridge-child.js';
import { SocketPage } from './socket-page.js';
import { signIn } from './web-harness.js';

/** Polls with room for a busy machine. */
async function within<T>(what: string, read: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A seeded generator (mulberry32): the same fuzz on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A raw TCP connection: what it received, and whether the server has closed it. */
function rawSocket(port: number): { socket: Socket; received: () => string; ended: () => boolean } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  let ended = false;
  socket.on('data', (data) => {
    received += data.toString('latin1');
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    ended = true;
  });
  return { socket, received: () => received, ended: () => ended };
}

/** A socket closed by the server: its close code. */
const closedWith = (page: SocketPage) => within('the socket to close', () => page.closed?.code);

describe('the web room under hostile input (the bridge as its own process)', { timeout: 240_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-hostile-'));
  let discord: FakeDiscord | undefined;
  let slack: FakeSlack | undefined;
  let llm: FakeOpenAI | undefined;
  let child: BridgeChild | undefined;
  afterAll(async () => {
    await child?.stop();
    await llm?.close();
    await discord?.close();
    await slack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stays up, closes each bad socket with its reason, and the other pages and Discord go on', async () => {
    discord = await startFakeDiscord({ bots: [{ token: 'tok-code', name: 'code-bot' }], channels: ['general'] });
    slack = await startFakeSlack();
    const app = slack.addApp('code');
    llm = await startFakeOpenAI();
    llm.respond(() => ({ content: 'still here' }));
    const logFile = path.join(dir, 'bridge.log');
    child = startBridgeChild({
      PATH: process.env.PATH ?? '',
      ROUNDTABLE_CWD: dir,
      AGENTS_DIR: writeAnsweringAgent(dir),
      DATA_DIR: path.join(dir, 'data'),
      LOG_FILE: logFile,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'test-key',
      LLM_MAX_RETRIES: '0',
      DISCORD_API_URL: discord.apiURL,
      DISCORD_TOKEN_CODE: 'tok-code',
      SLACK_API_URL: slack.apiUrl,
      SLACK_BOT_TOKEN_CODE: app.botToken,
      SLACK_APP_TOKEN_CODE: app.appToken,
      WEB_PORT: '0',
      WEB_ROOMS: 'general',
      WEB_MAX_FILE_MB: '1',
    });
    expect(await child.ready, child.stderr()).toBe(true);
    // WEB_PORT 0 picks a free port; the log says which.
    const port = await within('the web room to listen', () => {
      const line = (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '')
        .split('\n')
        .find((l) => l.includes('"msg":"web room listening"'));
      return line ? (JSON.parse(line) as { port: number }).port : undefined;
    });
    const base = `http://127.0.0.1:${port}`;
    const store = openStore(path.join(dir, 'data', 'roundtable.db'));
    let ana: string;
    let ben: string;
    try {
      ana = await signIn(await inviteLink(store.people, { name: 'ana', operator: false }, base, Date.now()));
      ben = await signIn(await inviteLink(store.people, { name: 'ben', operator: true }, base, Date.now()));
    } finally {
      await store.close();
    }
    const bens = await SocketPage.open(base, ben);
    /** The bridge is up and Ben's page open: a ping after what came before is answered. */
    const alive = async () => {
      await new Promise((resolve) => {
        bens.ws.once('pong', resolve);
        bens.ws.once('close', resolve);
        bens.ws.ping();
      });
      expect(child?.exited(), `the bridge exited:\n${child?.stderr()}`).toBe(false);
      expect(bens.closed).toBeUndefined();
    };

    // Frames no page sends: each closes its own socket with the code that says why.
    const oversized = await SocketPage.open(base, ana);
    oversized.ws.send('x'.repeat(300_000));
    expect(await closedWith(oversized)).toBe(1009);
    await alive();
    const invalid = await SocketPage.open(base, ana);
    invalid.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0xc3, 0x28]), { binary: false });
    expect(await closedWith(invalid)).toBe(1007);
    await alive();
    const fragments = await SocketPage.open(base, ana);
    for (let i = 0; i < 4; i++) fragments.ws.send('y'.repeat(100_000), { fin: false });
    fragments.ws.send('y', { fin: true });
    expect(await closedWith(fragments)).toBe(1009);
    await alive();

    // Binary frames, random JSON and a post split in fragments: answered or ignored, the socket stays open.
    const random = seeded(20_261_129);
    const odd = await SocketPage.open(base, ana);
    odd.ws.send(randomBytes(2_000), { binary: true });
    const values = [null, 1, 'post', [], {}, { type: 'post' }, { type: 'post', id: 'x', text: 5 }, { type: 'nope' }];
    for (let i = 0; i < 60; i++) {
      const value = values[Math.floor(random() * values.length)];
      odd.ws.send(
        random() < 0.5 ? JSON.stringify(value) : JSON.stringify(value).slice(0, 1 + Math.floor(random() * 8)),
      );
    }
    // JSON nested 100,000 deep (200 KB, under the frame limit).
    odd.ws.send(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    odd.ws.send(`{"type":"post","id":"deep-post-1","text":${'['.repeat(50_000)}${']'.repeat(50_000)}}`);
    odd.ws.send('{"type":"post","id":"fragmented-post-1",', { fin: false });
    odd.ws.send('"text":"in two pieces"}', { fin: true });
    await odd.next('ack', (f) => f.id === 'fragmented-post-1');
    expect(odd.frames.filter((f) => f.type === 'notice').length).toBeGreaterThan(30);
    expect(odd.closed).toBeUndefined();

    // Random bytes on a raw socket, after a real handshake and instead of one.
    for (let i = 0; i < 6; i++) {
      const raw = rawSocket(port);
      raw.socket.write(
        [
          'GET /ws?room=general HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          'Upgrade: websocket',
          'Connection: Upgrade',
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
          'Sec-WebSocket-Version: 13',
          `Origin: ${base}`,
          `Cookie: ${ana}`,
          '',
          '',
        ].join('\r\n'),
      );
      await within('the handshake', () => raw.received().includes('\r\n\r\n'));
      expect(raw.received()).toMatch(/^HTTP\/1\.1 101/);
      raw.socket.write(randomBytes(64 + Math.floor(random() * 4_000)));
      await within('the server to close a socket sending garbage', raw.ended);
    }
    for (let i = 0; i < 6; i++) {
      const raw = rawSocket(port);
      raw.socket.write(randomBytes(64 + Math.floor(random() * 4_000)));
      await within('the server to close a connection that is not HTTP', raw.ended);
    }
    await alive();

    // The HTTP API: malformed JSON, a body over the limit, wrong content types, a body cut off.
    const headers = { cookie: ben, origin: base };
    const command = (body: string, type = 'application/json') =>
      fetch(`${base}/api/ops/command`, { method: 'POST', headers: { ...headers, 'content-type': type }, body });
    expect((await command('{"room": ')).status).toBe(400);
    expect((await command('x'.repeat(5_000_000))).status).toBe(400);
    expect((await command('<xml/>', 'application/xml')).status).toBe(400);
    const upload = await fetch(`${base}/api/rooms/general/files?name=big.bin`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/octet-stream' },
      body: randomBytes(3 * 1024 * 1024),
    });
    expect(upload.status).toBe(413);
    expect((await fetch(`${base}/api/rooms/general/history?before=%ff%fe`, { headers })).status).toBe(200);
    for (let i = 0; i < 4; i++) {
      const cut = rawSocket(port);
      cut.socket.write(
        [
          'POST /api/rooms/general/files?name=cut.bin HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          `Origin: ${base}`,
          `Cookie: ${ben}`,
          'Content-Length: 500000',
          '',
          '',
        ].join('\r\n'),
      );
      // Cut off once half of what it promised has gone out.
      cut.socket.write(randomBytes(250_000), () => cut.socket.destroy());
      await within('the cut-off upload to end', cut.ended);
    }
    await alive();

    // Requests that never finish (one byte at a time): the server ends them within a bounded wait, and answers
    // everyone else meanwhile.
    const slow = Array.from({ length: 8 }, () => rawSocket(port));
    for (const s of slow) s.socket.write(`GET /api/me HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
    const drip = setInterval(() => {
      for (const s of slow) if (!s.ended()) s.socket.write('a');
    }, 500);
    try {
      expect((await fetch(`${base}/api/me`, { headers })).status).toBe(200);
      await within('the server to end requests that never finish', () => slow.every((s) => s.ended()), 60_000);
    } finally {
      clearInterval(drip);
    }
    await alive();

    // Afterwards: another person's page sees a new post, and the Discord room is answered.
    const again = await SocketPage.open(base, ana);
    again.post({ id: 'after-the-storm-1', text: 'still talking' });
    await again.next('ack', (f) => f.id === 'after-the-storm-1');
    await bens.next('event', (f) => f.event.kind === 'message' && f.event.message.text === 'still talking');
    discord.humanSays('general', 'alice', `<@${discord.bot('code-bot').id}> are you there?`);
    await within('the answer on Discord', () =>
      discord?.botMessages('general').some((m) => m.content === 'still here'),
    );
    await alive();
    // Each refused frame left one line in the log.
    const log = readFileSync(logFile, 'utf8');
    expect(log).toMatch(/Max payload size exceeded/);
    expect(log).toMatch(/invalid UTF-8 sequence/);
    expect(log).not.toMatch(/Unhandled 'error' event/);
    // A request the client cut off is not the bridge's failure.
    expect(log).not.toMatch(/web room request failed/);
    await again.close();
    await bens.close();
  });
});
