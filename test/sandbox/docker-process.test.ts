import Dockerode from 'dockerode';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createDockerSandbox } from '../../sandbox/index.js';
import { readSettings } from '../../src/config/index.js';
import { SandboxError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import type { ProcessSpec, Sandbox, SandboxProcess } from '../../src/ports.js';
import { DOCKER_TEST_TIMEOUT, runDockerTests, SandboxHarness } from './docker-harness.js';

const T = { timeoutMs: 20_000 };
/** Bounds for what a busy machine may take: the assertions poll, they never wait a fixed time. */
const WAIT = { timeout: 60_000, interval: 50 };

/** A spawned process with what it said and how it ended, collected. */
interface Watched {
  readonly child: SandboxProcess;
  stdout: string;
  stderr: string;
  exit: { code: number | null } | undefined;
}

async function start(
  sandbox: Sandbox,
  key: string,
  spec: Partial<ProcessSpec> & { command: string },
): Promise<Watched> {
  const child = await (sandbox.spawn as NonNullable<Sandbox['spawn']>)(key, { args: [], env: {}, ...spec });
  const watched: Watched = { child, stdout: '', stderr: '', exit: undefined };
  child.onStdout((chunk) => {
    watched.stdout += Buffer.from(chunk).toString('utf8');
  });
  child.onStderr((chunk) => {
    watched.stderr += Buffer.from(chunk).toString('utf8');
  });
  child.onExit((code) => {
    watched.exit = { code };
  });
  return watched;
}

const ended = (watched: Watched) => vi.waitFor(() => expect(watched.exit).toBeDefined(), WAIT);

describe('Processes in the sandbox without an engine', () => {
  it('rejects with the usual line when Docker is not reachable', async () => {
    const sandbox = createDockerSandbox({
      settings: readSettings({ DATA_DIR: '/nonexistent/data' }),
      logger: silentLogger(),
      docker: new Dockerode({ socketPath: '/nonexistent/docker.sock' }),
    });
    const failure = await sandbox.spawn?.('console:main', { command: 'cat', args: [], env: {} }).catch((e) => e);
    expect(failure).toBeInstanceOf(SandboxError);
    expect((failure as SandboxError).message).toBe(
      'Docker is not reachable at /nonexistent/docker.sock: start the Docker engine (dockerd) or set DOCKER_HOST',
    );
    await sandbox.close();
  });
});

describe.skipIf(!runDockerTests)('Processes in the sandbox (real engine)', { timeout: DOCKER_TEST_TIMEOUT }, () => {
  const harness = new SandboxHarness();
  const sandbox = harness.create();
  afterAll(() => harness.cleanup());

  it('echoes through cat: stdin in, stdout out, in order', async () => {
    const cat = await start(sandbox, 'console:cat', { command: 'cat' });
    cat.child.write('hello\n');
    cat.child.write(new TextEncoder().encode('second line\n'));
    await vi.waitFor(() => expect(cat.stdout).toBe('hello\nsecond line\n'), WAIT);
    expect(cat.exit).toBeUndefined();
    await cat.child.kill();
    expect(cat.exit).toEqual({ code: null });
  });

  it('keeps stderr apart from stdout, and reports the exit code of a process that ends by itself', async () => {
    const script = 'echo out; echo err >&2; echo out2; exit 3';
    const child = await start(sandbox, 'console:streams', { command: 'sh', args: ['-c', script] });
    await ended(child);
    expect(child.stdout).toBe('out\nout2\n');
    expect(child.stderr).toBe('err\n');
    expect(child.exit).toEqual({ code: 3 });
  });

  it('runs as the sandbox user in /workspace (or cwd), with its env and no variable of the bridge', async () => {
    process.env.ROUNDTABLE_BRIDGE_ONLY = 'not-for-the-sandbox';
    try {
      const script = 'id -un; pwd; env';
      const child = await start(sandbox, 'console:env', {
        command: 'sh',
        args: ['-c', script],
        env: { MCP_TOKEN: 'given $HOME "quoted"' },
      });
      await ended(child);
      const [user, cwd] = child.stdout.split('\n');
      expect([user, cwd]).toEqual(['sandbox', '/workspace']);
      expect(child.stdout).toContain('MCP_TOKEN=given $HOME "quoted"\n');
      expect(child.stdout).toContain('HOME=/tmp\n');
      expect(child.stdout).not.toContain('ROUNDTABLE_BRIDGE_ONLY');
      // What a command gets, and nothing more: the same names (but the process's own).
      const names = (text: string) =>
        text
          .split('\n')
          .map((line) => line.split('=')[0])
          .filter((name) => name && !['PWD', 'OLDPWD', 'SHLVL', '_', 'MCP_TOKEN'].includes(name))
          .sort();
      const command = await sandbox.exec('console:env', 'env', T);
      expect(names(child.stdout.split('\n').slice(2).join('\n'))).toEqual(names(command.output));

      const inTmp = await start(sandbox, 'console:env', { command: 'pwd', cwd: '/tmp' });
      await ended(inTmp);
      expect(inTmp.stdout).toBe('/tmp\n');
    } finally {
      delete process.env.ROUNDTABLE_BRIDGE_ONLY;
    }
  });

  it('kills: SIGTERM first, SIGKILL for a process that ignores it; the container stays', async () => {
    const key = 'console:kill';
    const stubborn = await start(sandbox, key, {
      command: 'sh',
      args: ['-c', 'trap "" TERM; echo ready; while :; do sleep 1; done'],
    });
    await vi.waitFor(() => expect(stubborn.stdout).toBe('ready\n'), WAIT);
    const began = Date.now();
    await stubborn.child.kill();
    expect(stubborn.exit).toEqual({ code: null });
    // The grace period passed before SIGKILL.
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_900);
    const left = await sandbox.exec(key, 'ps -eo args | grep -c "[w]hile" || true', T);
    expect(left.output.trim()).toBe('0');
    // Killing again, or writing after the end, does nothing.
    await stubborn.child.kill();
    stubborn.child.write('ignored\n');
  });

  it('kills a process whatever a command did to /tmp meanwhile', async () => {
    const key = 'console:tmp-wiped';
    const server = await start(sandbox, key, { command: 'sh', args: ['-c', 'echo up; exec sleep 1001'] });
    await vi.waitFor(() => expect(server.stdout).toBe('up\n'), WAIT);
    await sandbox.exec(key, 'rm -rf /tmp/* /tmp/.[!.]* 2>/dev/null; ls -A /tmp | wc -l', T);
    await server.child.kill();
    expect(server.exit).toEqual({ code: null });
    const left = await sandbox.exec(key, 'ps -eo args | grep -c "^sleep 1001" || true', T);
    expect(left.output.trim()).toBe('0');
  });

  it('ends with onExit(null) when the room is reset', async () => {
    const key = 'console:reset';
    const cat = await start(sandbox, key, { command: 'cat' });
    await sandbox.reset?.(key);
    await ended(cat);
    expect(cat.exit).toEqual({ code: null });
    expect(await harness.containers(key)).toHaveLength(0);
  });

  it('is killed at shutdown when the containers are kept (SANDBOX_KEEP_ON_EXIT), and ends with them otherwise', async () => {
    const kept = harness.create({ SANDBOX_KEEP_ON_EXIT: 'true' });
    const key = 'console:kept';
    const server = await start(kept, key, { command: 'sh', args: ['-c', 'echo up; exec sleep 1000'] });
    await vi.waitFor(() => expect(server.stdout).toBe('up\n'), WAIT);
    await kept.close();
    expect(server.exit).toEqual({ code: null });
    // The container stays, without the process that nobody speaks to any more.
    const again = harness.create();
    const left = await again.exec(key, 'ps -eo args | grep -c "^sleep 1000" || true', T);
    expect(left.output.trim()).toBe('0');

    const removed = harness.create();
    const other = await start(removed, 'console:removed', { command: 'cat' });
    await removed.close();
    await ended(other);
    expect(other.exit).toEqual({ code: null });
  });

  it('rejects fast, with a short reason, when the command is not in the image or the folder does not exist', async () => {
    const began = Date.now();
    const missing = await sandbox.spawn?.('console:missing', { command: 'npx', args: ['x'], env: {} }).catch((e) => e);
    expect(missing).toBeInstanceOf(SandboxError);
    expect((missing as SandboxError).message).toBe('command not found in the sandbox image: npx');
    // No hang: a spawn is a container (made here) and one exec.
    expect(Date.now() - began).toBeLessThan(30_000);
    const nowhere = await sandbox
      .spawn?.('console:missing', { command: 'cat', args: [], env: {}, cwd: '/workspace/nowhere' })
      .catch((e) => e);
    expect((nowhere as SandboxError).message).toBe(
      'the working directory does not exist in the sandbox: /workspace/nowhere',
    );
    const badName = await sandbox
      .spawn?.('console:missing', { command: 'cat', args: [], env: { 'A=B': 'x' } })
      .catch((e) => e);
    expect((badName as SandboxError).message).toBe('invalid environment variable name for a process: A=B');
  });

  it("sees its own room's /workspace only", async () => {
    await sandbox.exec('discord:room-a', 'echo secret-a > only-a.txt', T);
    const inB = await start(sandbox, 'discord:room-b', { command: 'cat', args: ['/workspace/only-a.txt'] });
    await ended(inB);
    expect(inB.stdout).toBe('');
    expect(inB.stderr).toContain('No such file');
    expect(inB.exit).toEqual({ code: 1 });
    const inA = await start(sandbox, 'discord:room-a', { command: 'cat', args: ['only-a.txt'] });
    await ended(inA);
    expect(inA.stdout).toBe('secret-a\n');
  });

  it('sees a volume workspace the same way (SANDBOX_WORKSPACES=volume)', async () => {
    const volumes = harness.create({ SANDBOX_WORKSPACES: 'volume' });
    const key = 'console:volume';
    await volumes.exec(key, 'echo in the volume > v.txt', T);
    const child = await start(volumes, key, { command: 'cat', args: ['v.txt'] });
    await ended(child);
    expect(child.stdout).toBe('in the volume\n');
    expect(child.exit).toEqual({ code: 0 });
  });

  it('may not grow a file past what the workspace has left when it starts (SANDBOX_DISK)', async () => {
    const small = harness.create({ SANDBOX_DISK: '1m' });
    const key = 'console:disk';
    await small.exec(key, 'head -c 300000 /dev/zero > already', T);
    const writer = await start(small, key, {
      command: 'sh',
      args: ['-c', 'head -c 3000000 /dev/zero > big; echo "exit $?"; wc -c < big'],
    });
    await ended(writer);
    const [status, size] = writer.stdout.trim().split('\n');
    expect(status).not.toBe('exit 0');
    // At most the megabyte less what was there (and the blocks `du` counts for it).
    expect(Number(size)).toBeLessThanOrEqual(1024 * 1024 - 290_000);
    expect(Number(size)).toBeGreaterThan(0);
  });

  it('has no network, as commands have none', async () => {
    const script = [
      'import socket',
      'try:',
      '    socket.create_connection(("1.1.1.1", 53), timeout=3).close(); print("connected")',
      'except OSError as error:',
      '    print("failed", error.errno)',
      'print(sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]))',
    ].join('\n');
    const child = await start(sandbox, 'console:network', { command: 'python3', args: ['-c', script] });
    await ended(child);
    expect(child.stdout).toBe("failed 101\n['lo']\n");
  });

  it('holds the bridge memory bounded while a process floods stdout, heard or not', async () => {
    const flood = ['-c', 'exec yes 0123456789012345678901234567890123456789012345678901234567890123456789'];
    const before = process.memoryUsage();
    let peak = 0;
    const sample = () => {
      const now = process.memoryUsage();
      peak = Math.max(peak, now.arrayBuffers - before.arrayBuffers + now.heapUsed - before.heapUsed);
    };
    // Heard: 200 MiB go through a listener that keeps none of it.
    const heard = await (sandbox.spawn as NonNullable<Sandbox['spawn']>)('console:flood', {
      command: 'sh',
      args: flood,
      env: {},
    });
    let bytes = 0;
    heard.onStdout((chunk) => {
      bytes += chunk.length;
      if (bytes % (1 << 20) < chunk.length) sample();
    });
    await vi.waitFor(() => expect(bytes).toBeGreaterThan(200 * 1024 * 1024), { timeout: 120_000, interval: 100 });
    await heard.kill();
    expect(peak).toBeLessThan(128 * 1024 * 1024);

    // Unheard: what arrives before a listener is held up to a bound, then the stream waits.
    const unheard = await (sandbox.spawn as NonNullable<Sandbox['spawn']>)('console:flood', {
      command: 'sh',
      args: flood,
      env: {},
    });
    const quiet = process.memoryUsage();
    let polls = 0;
    await vi.waitFor(
      () => {
        polls += 1;
        const now = process.memoryUsage();
        expect(now.arrayBuffers - quiet.arrayBuffers).toBeLessThan(32 * 1024 * 1024);
        // Watched for a while (a few seconds), while `yes` could have written gigabytes.
        expect(polls).toBeGreaterThan(30);
      },
      { timeout: 60_000, interval: 100 },
    );
    let held = 0;
    unheard.onStdout((chunk) => {
      held += chunk.length;
    });
    // What was held comes first, then the stream flows again.
    expect(held).toBeGreaterThan(1024 * 1024);
    expect(held).toBeLessThan(2 * 1024 * 1024);
    await vi.waitFor(() => expect(held).toBeGreaterThan(8 * 1024 * 1024), WAIT);
    await unheard.kill();
  });

  it('counts an open process as use for the idle timer only while it is written to', async () => {
    const idle = harness.create({ SANDBOX_IDLE_MINUTES: '1' });
    const key = 'console:idle';
    const cat = await start(idle, key, { command: 'cat' });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      vi.advanceTimersByTime(50_000);
      cat.child.write('still here\n');
      vi.advanceTimersByTime(50_000);
      // 100 s since the start, 50 s since the last write: kept.
      expect(await harness.containers(key)).toHaveLength(1);
      vi.advanceTimersByTime(11_000);
    } finally {
      vi.useRealTimers();
    }
    await ended(cat);
    expect(cat.exit).toEqual({ code: null });
    expect(cat.stdout).toBe('still here\n');
    await vi.waitFor(async () => expect(await harness.containers(key)).toHaveLength(0), WAIT);
  });
});
