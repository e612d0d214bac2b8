import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dataDirProblem, lockDataDir } from '../../src/data-dir.js';
import { run } from '../../src/main.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { startBridgeProcess } from '../helpers/bridge-process.js';
import { builtBridge } from '../helpers/built-bridge.js';
import { until } from '../helpers/until.js';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const MAIN = path.join(ROOT, 'src/main.ts');

let llm: FakeOpenAI;
let dir: string;
beforeAll(async () => {
  llm = await startFakeOpenAI();
  llm.respond(() => ({ content: '[pass]' }));
});
afterAll(() => llm.close());
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-datadir-'));
  mkdirSync(path.join(dir, 'agents'));
  writeFileSync(path.join(dir, 'agents', 'echo.md'), '---\nname: echo\nmodel: echo\n---\nYou are echo.\n');
  return () => rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  ...process.env,
  OPENAI_BASE_URL: llm.baseURL,
  SANDBOX_IMAGE: 'absent-image:none',
  ...extra,
});

/** `npm start` as a child process; resolves once its terminal room is open (its banner printed). */
async function startBridge(): Promise<ChildProcess> {
  const child = spawn(TSX, [MAIN], { cwd: dir, env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
  let printed = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes('Roundtable terminal room')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the bridge exited (${code}) before it started: ${printed}`)));
  });
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

describe('one bridge per DATA_DIR', () => {
  it('refuses a second bridge with one clear line, and a kill -9 of the first leaves no stale lock', async () => {
    const first = await startBridge();
    try {
      const second = await exec(TSX, [MAIN], { cwd: dir, env: env(), timeout: 60_000 }).catch(
        (error: { code: number; stderr: string }) => error,
      );
      expect(second).toMatchObject({ code: 1 });
      expect((second as { stderr: string }).stderr.trim()).toBe(
        `another Roundtable bridge is running on DATA_DIR ${path.join(dir, 'data')} (it holds ${path.join(dir, 'data', 'roundtable.lock')}); stop it first, or give this one its own DATA_DIR`,
      );
    } finally {
      first.kill('SIGKILL');
      await exited(first);
    }
    // The OS released the lock with the process: a new bridge starts and ends normally.
    const third = await startBridge();
    third.stdin?.end('/status\n');
    expect(await exited(third)).toBe(0);
  }, 120_000);

  it('refuses a second bridge in the same process too, and frees the folder on shutdown', async () => {
    const options = {
      argv: [],
      cwd: dir,
      env: { OPENAI_BASE_URL: llm.baseURL },
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      sandbox: async () => new FakeSandbox(),
    };
    const first = await run(options);
    expect(first.healthPort).toBeUndefined(); // HEALTH_PORT is off by default
    await expect(run({ ...options, stdin: new PassThrough() })).rejects.toThrow(/another Roundtable bridge is running/);
    await first.shutdown();
    lockDataDir(path.join(dir, 'data')).release();
    // The log file opens in the background; let it before the folder is removed.
    await until(() => existsSync(path.join(dir, 'data', 'roundtable.log')));
  });
});

describe('an unusable DATA_DIR', () => {
  beforeAll(() => {
    builtBridge();
  }, 600_000);

  // Node's recursive mkdir never returns under /proc (mkdir there answers ENOENT beside a parent that exists).
  it('stops at once with one line naming DATA_DIR when it lies under /proc, and so does --check', async () => {
    const proc = '/proc/roundtable/data';
    const started = startBridgeProcess({
      cwd: dir,
      env: env({ DATA_DIR: proc }),
      stdin: 'pipe',
      timeoutMs: 20_000,
    }).exited;
    const checked = startBridgeProcess({
      cwd: dir,
      env: env({ DATA_DIR: proc }),
      args: ['--check'],
      timeoutMs: 20_000,
    }).exited;
    const [start, check] = await Promise.all([started, checked]);
    const problem = `DATA_DIR: ${proc} cannot be created: the file system there takes no new folders (such as /proc)`;
    expect(start.stderr).toBe(`Configuration error: environment: ${problem}\n`);
    expect(start.code).toBe(1);
    expect(check.stdout.split('\n')).toContain(`✗ data folder: ${problem}`);
    expect(check.code).toBe(1);
    // Bounded: a second or two when the machine is idle, far less than the 20 s after which it is killed.
    expect(Math.max(start.ms, check.ms)).toBeLessThan(15_000);
  });

  it('names the variable and the path when DATA_DIR is a file', async () => {
    writeFileSync(path.join(dir, 'occupied'), 'a file');
    const failure = await exec(TSX, [MAIN], {
      cwd: dir,
      env: env({ DATA_DIR: './occupied' }),
      timeout: 60_000,
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr.trim()).toBe(
      `Configuration error: environment: DATA_DIR: ${path.join(dir, 'occupied')} is not a folder (or a file is in the way)`,
    );
  }, 60_000);

  // Root writes anywhere and a read-only mount needs privileges, so these two are told by their error codes.
  it('says a folder it may not write is not writable, and a read-only file system is read-only', () => {
    expect(dataDirProblem('EACCES')).toBe('cannot be created or written by this user (permission denied)');
    expect(dataDirProblem('EROFS')).toBe('is on a read-only file system');
  });
});
