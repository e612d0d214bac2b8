import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { startBridgeProcess } from '../helpers/bridge-process.js';
import { builtBridge } from '../helpers/built-bridge.js';
import { until } from '../helpers/until.js';

let llm: FakeOpenAI;
let dir: string;
beforeAll(async () => {
  builtBridge(); // npm run build, when dist/ is older than the sources
  llm = await startFakeOpenAI();
  llm.respond(() => ({ content: 'pong' }));
}, 600_000);
afterAll(() => llm.close());
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-nothing-'));
  mkdirSync(path.join(dir, 'agents'));
  writeFileSync(
    path.join(dir, 'agents', 'echo.md'),
    '---\nname: echo\nmodel: echo\nactivation: always\n---\nYou echo.\n',
  );
  return () => rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  OPENAI_BASE_URL: llm.baseURL,
  LLM_MAX_RETRIES: '0',
  SANDBOX_IMAGE: 'absent-image:none',
  ...extra,
});

const NO_TOKENS =
  'Nothing to serve: no agent in ./agents has Discord or Slack tokens, and standard input ended before the terminal room got a line. ' +
  'Add discord: { token_env: DISCORD_TOKEN_ECHO } (or slack: { bot_token_env: SLACK_BOT_TOKEN_ECHO, app_token_env: SLACK_APP_TOKEN_ECHO }) ' +
  'to agents/echo.md and set that variable, or run npm start -- --console in a terminal.';

describe('no platform tokens and no terminal', () => {
  it('exits 1 with one line saying what to set when standard input is /dev/null, opening nothing', async () => {
    const { code, stdout, stderr } = await startBridgeProcess({ cwd: dir, env: env(), stdin: 'ignore' }).exited;
    expect(code).toBe(1);
    expect(stderr).toBe(`${NO_TOKENS}\n`);
    expect(stdout).toBe('');
    // Nothing was opened: no data folder, no database, no log.
    expect(existsSync(path.join(dir, 'data'))).toBe(false);
  });

  it('exits 1 with the same line when piped input ends before any line arrived', async () => {
    const bridge = startBridgeProcess({ cwd: dir, env: env(), stdin: 'pipe' });
    // The room opened (its input might still bring lines), then its input ended with none.
    await until(() => bridge.output().stdout.includes('Roundtable terminal room'));
    bridge.child.stdin?.end();
    const { code, stderr } = await bridge.exited;
    expect(code).toBe(1);
    expect(stderr).toBe(`${NO_TOKENS}\n`);
  });

  it('answers piped lines and exits 0 as before', async () => {
    const bridge = startBridgeProcess({ cwd: dir, env: env(), stdin: 'pipe' });
    bridge.child.stdin?.end('ping\n');
    const { code, stdout, stderr } = await bridge.exited;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.split('\n').slice(1)).toEqual(['[@user]: ping', '[@echo]: pong', '']);
  });

  it('reads a file given as standard input line by line, and exits 0', async () => {
    writeFileSync(path.join(dir, 'input.txt'), 'ping\n/quit\n');
    const fd = openSync(path.join(dir, 'input.txt'), 'r');
    try {
      const { code, stdout } = await startBridgeProcess({ cwd: dir, env: env(), stdin: fd }).exited;
      expect(stdout.split('\n').slice(1)).toEqual(['[@user]: ping', '[@echo]: pong', '']);
      expect(code).toBe(0);
    } finally {
      closeSync(fd);
    }
  });

  it('keeps running with the web room on (WEB_PORT), standard input at /dev/null, until it is stopped', async () => {
    const bridge = startBridgeProcess({
      cwd: dir,
      env: env({ WEB_PORT: '0', LOG_FORMAT: 'json', SANDBOX_IMAGE: 'absent-image:none' }),
      stdin: 'ignore',
    });
    let port = 0;
    await until(() => {
      port = Number(/"port":(\d+),[^\n]*"msg":"web room listening"/.exec(bridge.output().stderr)?.[1] ?? 0);
      return port > 0 || bridge.child.exitCode !== null;
    });
    expect(bridge.output().stderr).not.toContain('Nothing to serve');
    const page = await fetch(`http://127.0.0.1:${port}/room/general`);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('You are not signed in');
    bridge.child.kill('SIGTERM');
    const { code, stdout } = await bridge.exited;
    expect(code).toBe(0);
    expect(stdout).toBe('');
  });

  it('says --console needs a terminal when it is given with input that is already over', async () => {
    const { code, stderr } = await startBridgeProcess({
      cwd: dir,
      env: env(),
      args: ['--console'],
      stdin: 'ignore',
    }).exited;
    expect(code).toBe(1);
    expect(stderr).toBe(
      'Nothing to serve: --console opens only the terminal room, and standard input ended before it got a line. ' +
        'Run it in a terminal, or without --console to serve the agents on Discord and Slack.\n',
    );
  });
});
