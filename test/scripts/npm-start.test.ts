import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { builtBridge, ROOT } from '../helpers/built-bridge.js';

/** The processes `pid` started (Linux: /proc). */
function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

describe('npm start', { timeout: 600_000 }, () => {
  let dir: string;
  const started: number[] = [];
  beforeAll(() => {
    builtBridge();
  }, 600_000);
  afterEach(() => {
    for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops the bridge when its own pid is killed, as a service manager or a terminal does', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-npm-start-'));
    mkdirSync(path.join(dir, 'agents'));
    writeFileSync(path.join(dir, 'agents', 'bob.md'), '---\nname: bob\nmodel: m\n---\nYou are bob.\n');
    const log = path.join(dir, 'bridge.log');
    // Input that stays open whatever happens to npm, as a terminal does: a `sleep` writes into the pipe.
    const feeder = spawn('sleep', ['600'], { stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(feeder.pid ?? 0);
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        AGENTS_DIR: path.join(dir, 'agents'),
        DATA_DIR: path.join(dir, 'data'),
        LOG_FILE: log,
        OPENAI_API_KEY: 'sk-npm-start-test-0000',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      },
      stdio: [feeder.stdout ?? 'ignore', 'ignore', 'ignore'],
    });
    const npmPid = npm.pid ?? 0;
    started.push(npmPid);
    const read = () => (existsSync(log) ? readFileSync(log, 'utf8') : '');
    await vi.waitFor(() => expect(read()).toContain('"msg":"bridge started"'), { timeout: 300_000, interval: 100 });
    // Whatever npm runs the script through, every process below it.
    const below = (pid: number): number[] => childrenOf(pid).flatMap((child) => [child, ...below(child)]);
    const bridgePids = below(npmPid);
    started.push(...bridgePids);
    expect(bridgePids.length).toBeGreaterThan(0);
    process.kill(npmPid, 'SIGTERM');
    await vi.waitFor(() => expect(read()).toContain('"msg":"bridge stopped"'), { timeout: 60_000, interval: 100 });
    await vi.waitFor(() => expect(bridgePids.filter(alive)).toEqual([]), { timeout: 60_000, interval: 100 });
  });
});
