import { afterAll, describe, expect, it } from 'vitest';
import { TRUNCATION_MARKER } from '../../sandbox/output-buffer.js';
import { DOCKER_TEST_TIMEOUT, runDockerTests, SandboxHarness } from './docker-harness.js';

// Both paths keep the same promises: the command runner (default) and one exec per command (its fallback).
describe.skipIf(!runDockerTests).each([
  { path: 'command runner', commandRunner: true },
  { path: 'one exec per command', commandRunner: false },
])('Docker sandbox limits (real engine, $path)', { timeout: DOCKER_TEST_TIMEOUT }, ({ commandRunner }) => {
  const harness = new SandboxHarness();
  const sandbox = harness.create({ SANDBOX_PIDS: '64', SANDBOX_MEMORY: '128m' }, { commandRunner });
  afterAll(() => harness.cleanup());

  it('stops `sleep 1000` at the time limit, kills it, and the container stays usable', async () => {
    const key = 'console:limits-sleep';
    await sandbox.exec(key, 'true', { timeoutMs: 30_000 });
    const result = await sandbox.exec(key, 'echo started; sleep 1000', { timeoutMs: 5_000 });
    expect(result).toEqual({ output: 'started\n', exitCode: null, timedOut: true });

    const after = await sandbox.exec(key, 'ps -eo args | grep -c "^sleep 1000" || true; hostname', {
      timeoutMs: 10_000,
    });
    const [count, hostname] = after.output.trim().split('\n');
    expect(count).toBe('0');
    expect(after.exitCode).toBe(0);
    // Same container as before: it was not thrown away to stop the command.
    expect(hostname).toBe((await sandbox.exec(key, 'hostname', { timeoutMs: 10_000 })).output.trim());
  });

  it('stops a command when the caller aborts', async () => {
    const key = 'console:limits-abort';
    const controller = new AbortController();
    const pending = sandbox.exec(key, 'echo waiting; sleep 1000', { timeoutMs: 60_000, signal: controller.signal });
    // Abort once the command is visibly running in the container.
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const probe = await sandbox.exec(key, 'pgrep -x sleep', { timeoutMs: 10_000 }).catch(() => undefined);
      if (probe?.exitCode === 0) break;
    }
    controller.abort();
    const result = await pending;
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBeNull();
    expect(result.output).toContain('[aborted]');
    expect((await sandbox.exec(key, 'echo fine', { timeoutMs: 10_000 })).output).toBe('fine\n');
  });

  it('lets a fork bomb hit the pids limit, then the next command works', async () => {
    const key = 'console:limits-forkbomb';
    const bomb = await sandbox.exec(key, ':(){ :|:& };:; sleep 30', { timeoutMs: 4_000 });
    expect(bomb.timedOut).toBe(true);
    expect(bomb.output).toMatch(/Resource temporarily unavailable/);

    const next = await sandbox.exec(key, 'echo recovered; ps -e --no-headers | wc -l', { timeoutMs: 10_000 });
    const [word, processes] = next.output.trim().split('\n');
    expect(word).toBe('recovered');
    expect(Number(processes)).toBeLessThan(10);
  });

  it('also recovers from a fork bomb that returns at once', async () => {
    const key = 'console:limits-forkbomb-quick';
    await sandbox.exec(key, ':(){ :|:& };:', { timeoutMs: 4_000 });
    const next = await sandbox.exec(key, 'echo recovered', { timeoutMs: 10_000 });
    expect(next).toEqual({ output: 'recovered\n', exitCode: 0, timedOut: false });
  });

  it('kills a memory hog, says so, and the next command works', async () => {
    const key = 'console:limits-memory';
    const hog = await sandbox.exec(key, 'python3 -c "data = bytearray(1024 ** 3); print(len(data))"', {
      timeoutMs: 20_000,
    });
    expect(hog.exitCode).toBe(137);
    expect(hog.timedOut).toBe(false);
    expect(hog.output).toMatch(/out of memory/);
    expect(hog.output).not.toContain('1073741824');
    expect(await sandbox.exec(key, 'echo still here', { timeoutMs: 10_000 })).toEqual({
      output: 'still here\n',
      exitCode: 0,
      timedOut: false,
    });
  });

  it('truncates `yes | head -c 200000000` while the bridge memory stays bounded', async () => {
    const key = 'console:limits-output';
    await sandbox.exec(key, 'true', { timeoutMs: 30_000 });
    const before = process.memoryUsage().rss;
    const result = await sandbox.exec(key, 'yes | head -c 200000000', { timeoutMs: 30_000 });
    const growth = process.memoryUsage().rss - before;

    expect(result.exitCode).toBe(0);
    expect(result.output).toHaveLength(5_000 + TRUNCATION_MARKER.length + 2_000);
    expect(result.output.startsWith('y\ny\n')).toBe(true);
    expect(result.output).toContain('\n... [truncated] ...\n');
    expect(growth).toBeLessThan(30 * 1024 * 1024);
  });

  it('keeps stdout and stderr in one stream and reports the exit code', async () => {
    const result = await sandbox.exec('console:limits-streams', 'echo out; echo err >&2; echo out2; exit 3', {
      timeoutMs: 10_000,
    });
    expect(result).toEqual({ output: 'out\nerr\nout2\n', exitCode: 3, timedOut: false });
  });

  it('contains `rm -rf / --no-preserve-root` to its own container and workspace', async () => {
    const victim = 'console:limits-rm-victim';
    const bystander = 'console:limits-rm-bystander';
    await sandbox.exec(bystander, 'echo safe > keep.txt', { timeoutMs: 30_000 });
    await sandbox.exec(victim, 'echo doomed > mine.txt', { timeoutMs: 30_000 });

    const rm = await sandbox.exec(victim, 'rm -rf / --no-preserve-root', { timeoutMs: 30_000 });
    expect(rm.exitCode).not.toBe(0);
    expect(rm.output).toMatch(/Read-only file system|Permission denied/);

    // The system is read-only, so the victim still runs commands; only its own workspace is gone.
    const victimAfter = await sandbox.exec(victim, 'ls -A /workspace | wc -l; python3 -c "print(6 * 7)"', {
      timeoutMs: 10_000,
    });
    expect(victimAfter.output).toBe('0\n42\n');
    expect((await sandbox.exec(bystander, 'cat keep.txt', { timeoutMs: 10_000 })).output).toBe('safe\n');
  });
});
