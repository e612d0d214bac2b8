import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/log.js';
import { redact } from '../src/secrets.js';
import { type FakeOpenAI, startFakeOpenAI } from './fakes/openai-server/index.js';
import { startBridgeProcess } from './helpers/bridge-process.js';
import { builtBridge } from './helpers/built-bridge.js';
import { until } from './helpers/until.js';

describe('log redaction', () => {
  it('removes configured secrets and token-shaped strings from every line', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rt-log-'));
    try {
      const file = path.join(dir, 'rt.log');
      const logger = createLogger({ level: 'info', file, secrets: ['my-local-secret-key'] });
      logger.info({ apiKey: 'sk-abcdefghijklmnopqrstuvwx', detail: 'used my-local-secret-key' }, 'calling');
      logger.info({ err: new Error('bad token xoxb-1234567890-abcdefghij') }, 'slack failed');
      logger.info({ config: { token: 'plain' } }, 'nested');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const text = readFileSync(file, 'utf8');
      expect(text).not.toMatch(/sk-abc|my-local-secret-key|xoxb-1234|"plain"/);
      expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps a command's reply route (an interaction token, a response_url) out of the log wherever it is", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rt-log-'));
    try {
      const file = path.join(dir, 'rt.log');
      const logger = createLogger({ level: 'info', file });
      logger.info({ command: { name: 'pass', reply: '{"token":"itoken-secret-1"}' } }, 'a command');
      logger.info({ reply: 'https://hooks.example/commands/T1/secret-2' }, 'a route');
      logger.info({ payload: { response_url: 'https://hooks.example/commands/T1/secret-3' } }, 'a slash command');
      await until(() => readFileSync(file, 'utf8').split('\n').length > 3);
      const text = readFileSync(file, 'utf8');
      expect(text).not.toMatch(/secret-1|secret-2|secret-3/);
      expect(text.match(/\[redacted\]/g)).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('redacts Discord-shaped bot tokens', () => {
    const token = `MTA${'x'.repeat(21)}.Gabcde.${'y'.repeat(30)}`;
    expect(redact(`login with ${token} failed`)).toBe('login with [redacted] failed');
  });
});

describe('a log file that fails at run time', () => {
  // /dev/full opens, then answers every write with ENOSPC: a disk that filled up after start-up.
  it('goes on logging to stderr and says why once, never taking the bridge down', async () => {
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) =>
      written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      const logger = createLogger({ level: 'info', file: '/dev/full' });
      logger.info('first');
      logger.info('second');
      await until(() => written.some((line) => line.includes('"second"')));
    } finally {
      process.stderr.write = write;
    }
    expect(written.filter((line) => line.startsWith('the log file'))).toEqual([
      'the log file /dev/full cannot be written (ENOSPC: no space left on device, write); logging to stderr\n',
    ]);
    expect(written.join('')).toContain('"msg":"first"');
  });
});

describe('a log file that fills up while a person watches the terminal', () => {
  it('goes on in short readable lines on the terminal, never JSON with stack traces', async () => {
    const written: string[] = [];
    const write = process.stderr.write;
    const tty = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    process.stderr.write = ((chunk: string | Uint8Array) =>
      written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      const logger = createLogger({ level: 'info', file: '/dev/full' });
      logger.error({ err: new Error('disk I/O error') }, 'a message could not be stored');
      await until(() => written.some((line) => line.includes('could not be stored')));
    } finally {
      process.stderr.write = write;
      if (tty) Object.defineProperty(process.stderr, 'isTTY', tty);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
    }
    const line = written.find((text) => text.includes('could not be stored')) ?? '';
    expect(line).toMatch(/^\d\d:\d\d:\d\d ERROR a message could not be stored \(disk I\/O error\)\n$/);
  });
});

describe('readable logs in a terminal', () => {
  it('turns a JSON line into time, level, message, error and fields', async () => {
    const { prettyLine } = await import('../src/log.js');
    const line = JSON.stringify({
      level: 50,
      time: Date.UTC(2026, 0, 1, 14, 2, 11),
      app: 'roundtable',
      msg: 'agent turn failed',
      err: { message: 'boom' },
      room: 'console:main',
      agent: 'code',
    });
    expect(prettyLine(line)).toBe('14:02:11 ERROR agent turn failed (boom) room=console:main agent=code\n');
    expect(prettyLine('not json\n')).toBe('not json\n');
  });
});

describe('the log file on every way the bridge exits', { timeout: 300_000 }, () => {
  let dir: string;
  let llm: FakeOpenAI;
  beforeAll(async () => {
    llm = await startFakeOpenAI({ responder: () => ({ content: 'noted' }) });
    builtBridge();
  }, 600_000);
  afterAll(() => llm.close());
  beforeEach(() => {
    llm.respond(() => ({ content: 'noted' }));
    dir = mkdtempSync(path.join(tmpdir(), 'rt-log-exit-'));
    mkdirSync(path.join(dir, 'agents'));
    writeFileSync(
      path.join(dir, 'agents', 'bob.md'),
      '---\nname: bob\nmodel: m\nactivation: always\n---\nYou are bob.\n',
    );
    return () => rmSync(dir, { recursive: true, force: true });
  });
  const logFile = () => path.join(dir, 'bridge.log');
  const logged = () => (existsSync(logFile()) ? readFileSync(logFile(), 'utf8') : '');
  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? '',
    HOME: dir,
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: 'sk-log-exit-test-key-0000',
    LOG_FILE: logFile(),
    LOG_LEVEL: 'debug',
    ...extra,
  });

  it('keeps every line up to "bridge stopped" when piped input ends', async () => {
    const bridge = startBridgeProcess({ cwd: dir, env: env(), stdin: 'pipe', timeoutMs: 240_000 });
    bridge.child.stdin?.end('hello @bob\nhow are you?\nthanks, bye\n');
    const exit = await bridge.exited;
    expect(exit.code, exit.stderr).toBe(0);
    const lines = logged().trimEnd().split('\n');
    expect(lines.at(-1)).toContain('"msg":"bridge stopped"');
    expect(lines.filter((line) => line.includes('"msg":"bridge started"'))).toHaveLength(1);
  });

  it('keeps every line up to "bridge stopped" when stopped by SIGTERM', async () => {
    const bridge = startBridgeProcess({ cwd: dir, env: env(), stdin: 'pipe', timeoutMs: 240_000 });
    await vi.waitFor(() => expect(logged()).toContain('"msg":"bridge started"'), { timeout: 120_000, interval: 50 });
    // Stopped in the middle of a model call: the turn's abort is logged on the way out too.
    llm.respond(() => ({ hang: true }));
    const asked = llm.requests.length;
    bridge.child.stdin?.write('hello @bob\n');
    await vi.waitFor(() => expect(llm.requests.length).toBeGreaterThan(asked), { timeout: 120_000, interval: 50 });
    bridge.child.kill('SIGTERM');
    const exit = await bridge.exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect(logged().trimEnd().split('\n').at(-1)).toContain('"msg":"bridge stopped"');
  });

  it('keeps the lines before a fatal start-up error, and the error itself', async () => {
    const port = await closedPort();
    const bridge = startBridgeProcess({
      cwd: dir,
      env: env({
        DATABASE_URL: `postgres://rt@127.0.0.1:${port}/rt`,
        OPENAI_BASE_URL: 'https://api.openai.com/v1',
        OPENAI_API_KEY: '',
      }),
      stdin: 'pipe',
      timeoutMs: 240_000,
    });
    const exit = await bridge.exited;
    expect(exit.code).toBe(1);
    const text = logged();
    expect(text).toContain('OPENAI_API_KEY is not set');
    expect(text.trimEnd().split('\n').at(-1)).toMatch(/"level":60.*"msg":"the bridge could not start"/);
  });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
