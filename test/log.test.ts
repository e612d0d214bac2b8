import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { redact } from '../src/secrets.js';
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
