import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import type { Sandbox } from '../../src/ports.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { until } from '../helpers/until.js';

const PROBLEM =
  'SANDBOX_NETWORK=bridgee: Docker says network bridgee not found ' +
  '(docker network ls lists the networks; none, the default, means no network)';

/** A sandbox whose start-up check finds one problem; counts how often it was asked. */
class CheckedSandbox implements Sandbox {
  checks = 0;
  async exec(): Promise<never> {
    throw new Error('not used here');
  }
  async check(): Promise<readonly string[]> {
    this.checks += 1;
    return [PROBLEM];
  }
  async close(): Promise<void> {}
}

let llm: FakeOpenAI;
let dir: string;
beforeAll(async () => {
  llm = await startFakeOpenAI();
});
afterAll(() => llm.close());
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-sandbox-check-'));
  mkdirSync(path.join(dir, 'agents'));
  return () => rmSync(dir, { recursive: true, force: true });
});

/** Opens the terminal room on `sandbox`, runs `whileOpen`, ends the room; returns what it printed. */
async function room(sandbox: Sandbox, whileOpen: (printed: () => string) => Promise<void>): Promise<string> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
  });
  const running = await run({
    argv: ['--console'],
    cwd: dir,
    env: { OPENAI_BASE_URL: llm.baseURL, DATA_DIR: path.join(dir, 'data') },
    stdin,
    stdout,
    sandbox: async () => sandbox,
  });
  await whileOpen(() => printed);
  stdin.end();
  await running.console?.finished;
  await running.shutdown();
  return printed;
}

describe("the sandbox's start-up check", () => {
  it('shows each problem in the terminal room and the log, naming the variable', async () => {
    writeFileSync(
      path.join(dir, 'agents', 'code.md'),
      '---\nname: code\nmodel: m\ntools: [bash]\n---\nYou are code.\n',
    );
    const sandbox = new CheckedSandbox();
    const printed = await room(sandbox, async (printed) => {
      await until(() => printed().includes(`[system]: warning: ${PROBLEM}\n`));
    });
    expect(sandbox.checks).toBe(1);
    expect(printed.split('\n').filter((line) => line.includes(PROBLEM))).toEqual([`[system]: warning: ${PROBLEM}`]);
    // The log file is written in the background.
    const logFile = path.join(dir, 'data', 'roundtable.log');
    const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
    await until(() => log().includes(PROBLEM));
    expect(
      log()
        .split('\n')
        .filter((line) => line.includes(PROBLEM))
        .map((line) => JSON.parse(line).level),
    ).toEqual([40]);
  });

  it('is not run when no agent has a tool that needs the sandbox', async () => {
    writeFileSync(path.join(dir, 'agents', 'chat.md'), '---\nname: chat\nmodel: m\ntools: []\n---\nYou are chat.\n');
    const sandbox = new CheckedSandbox();
    const printed = await room(sandbox, async () => {});
    expect(sandbox.checks).toBe(0);
    expect(printed).not.toContain('warning');
  });
});
