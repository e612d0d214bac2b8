import { afterAll, describe, expect, it } from 'vitest';
import { OutputBuffer } from '../../sandbox/output-buffer.js';
import { BAKED_RUNNER_PATH, RUNNER_SOURCE, sourceDigest } from '../../sandbox/runner-source.js';
import { DOCKER_TEST_TIMEOUT, runDockerTests, SandboxHarness } from './docker-harness.js';

const T = { timeoutMs: 20_000 };

/** What the bridge must answer for these bytes: the same decoding and cut as the exec-API path. */
function expected(bytes: Buffer): string {
  const buffer = new OutputBuffer();
  buffer.write(bytes);
  return buffer.text();
}

describe.skipIf(!runDockerTests)(
  'Docker sandbox command runner (real engine)',
  { timeout: DOCKER_TEST_TIMEOUT },
  () => {
    const harness = new SandboxHarness();
    const sandbox = harness.create({ SANDBOX_PIDS: '64' });
    const viaExec = harness.create({}, { commandRunner: false });
    afterAll(() => harness.cleanup());

    it('runs every command of a channel through one long-lived runner', async () => {
      const key = 'console:runner-reuse';
      const first = await sandbox.exec(key, 'echo $PPID', T);
      const second = await sandbox.exec(key, 'echo $PPID', T);
      expect(first.exitCode).toBe(0);
      expect(second.output).toBe(first.output);
      // The runner reads its requests from stdin; the command gets none of them.
      expect(await sandbox.exec(key, 'cat; echo done', T)).toEqual({ output: 'done\n', exitCode: 0, timedOut: false });
    });

    it('starts the image’s baked runner when it is this bridge’s, and sends its source otherwise', async () => {
      const digest = await viaExec.exec('console:runner-baked-probe', `sha256sum < ${BAKED_RUNNER_PATH} || true`, T);
      const baked = digest.output.startsWith(sourceDigest(RUNNER_SOURCE));
      const parent = await sandbox.exec('console:runner-baked', 'ps -o args= -p $PPID', T);
      expect(parent.output.startsWith(baked ? `python3 -I -S ${BAKED_RUNNER_PATH}` : 'python3 -I -S -c import')).toBe(
        true,
      );
    });

    it('still works after the command kills the runner, and stops what the command left running', async () => {
      const key = 'console:runner-killed';
      await sandbox.exec(key, 'true', T);
      const killed = await sandbox.exec(key, 'sleep 1000 & kill -9 $PPID; sleep 1000', T);
      expect(killed.exitCode).toBeNull();
      expect(killed.timedOut).toBe(false);
      expect(killed.output).toMatch(/command runner was killed|container stopped/);

      const next = await sandbox.exec(key, "echo alive; pgrep -c -f '^sleep 1000$' || true", T);
      expect(next).toEqual({ output: 'alive\n0\n', exitCode: 0, timedOut: false });
    });

    it('starts a fresh runner when the old one was killed between commands', async () => {
      const key = 'console:runner-killed-idle';
      const before = await sandbox.exec(key, 'echo $PPID', T);
      const [info] = await harness.containers(key);
      const container = harness.docker.getContainer(info?.Id ?? '');
      const exec = await container.exec({ Cmd: ['kill', '-9', before.output.trim()] });
      await exec.start({ Detach: true });
      await expect.poll(async () => (await exec.inspect()).Running).toBe(false);

      const after = await sandbox.exec(key, 'echo $PPID; echo works', T);
      expect(after.exitCode).toBe(0);
      expect(after.output).toMatch(/works\n$/);
      expect(after.output.split('\n')[0]).not.toBe(before.output.trim());
    });

    it('passes binary and invalid UTF-8 output through exactly as the exec-API path does', async () => {
      const small = "printf '\\xff\\xfe\\x00ok\\xc3'";
      const smallResult = await sandbox.exec('console:runner-binary', small, T);
      expect(smallResult).toEqual({
        output: expected(Buffer.from([0xff, 0xfe, 0x00, 0x6f, 0x6b, 0xc3])),
        exitCode: 0,
        timedOut: false,
      });
      expect(smallResult).toEqual(await viaExec.exec('console:runner-binary-exec', small, T));

      // Long enough to be cut (and for the runner to drop its middle), with characters of 1-4 bytes
      // and stray bytes on both sides of the cut.
      const script =
        "import sys; sys.stdout.buffer.write(bytes(range(256)) * 300 + ('é✓😀' * 20000).encode() + b'\\xf0\\x9f' + b'end')";
      const big = await sandbox.exec('console:runner-binary', `python3 -c "${script}"`, T);
      const bytes = Buffer.concat([
        Buffer.from(Array.from({ length: 300 }, () => Array.from({ length: 256 }, (_, i) => i)).flat()),
        Buffer.from('é✓😀'.repeat(20_000)),
        Buffer.from([0xf0, 0x9f]),
        Buffer.from('end'),
      ]);
      expect(big.output).toBe(expected(bytes));
      expect(big).toEqual(await viaExec.exec('console:runner-binary-exec', `python3 -c "${script}"`, T));
    });

    it('keeps overlapping commands of one channel apart', async () => {
      const key = 'console:runner-overlap';
      await sandbox.exec(key, 'true', T);
      const results = await Promise.all([
        sandbox.exec(key, 'sleep 0.5; echo slow', T),
        sandbox.exec(key, 'echo fast; exit 4', T),
        sandbox.exec(key, 'echo stuck; sleep 1000', { timeoutMs: 5_000 }),
        sandbox.exec(key, 'for i in $(seq 1 3000); do echo line $i; done | tail -n 1', T),
      ]);
      expect(results).toEqual([
        { output: 'slow\n', exitCode: 0, timedOut: false },
        { output: 'fast\n', exitCode: 4, timedOut: false },
        { output: 'stuck\n', exitCode: null, timedOut: true },
        { output: 'line 3000\n', exitCode: 0, timedOut: false },
      ]);
    });

    it('lets a deliberate setsid service outlive its command, not ordinary background jobs', async () => {
      const key = 'console:runner-service';
      // Waits until the service has its own session, so the test does not race setsid.
      const start =
        'sleep 501 & setsid sleep 502 >/dev/null 2>&1 </dev/null & ' +
        'until [ "$(ps -o sid= -p $! | tr -d " ")" = "$!" ]; do sleep 0.01; done; echo started';
      expect((await sandbox.exec(key, start, T)).output).toBe('started\n');
      const after = await sandbox.exec(key, "pgrep -a -f '^sleep 50[12]$' | cut -d' ' -f2- | sort", T);
      expect(after.output).toBe('sleep 502\n');
    });

    it('falls back to one exec per command when the runner cannot start', async () => {
      const broken = harness.create({}, { runnerSource: 'import sys\nsys.exit(3)\n' });
      const key = 'console:runner-broken';
      expect(await broken.exec(key, 'echo via exec; exit 2', T)).toEqual({
        output: 'via exec\n',
        exitCode: 2,
        timedOut: false,
      });
      const timedOut = await broken.exec(key, 'echo waiting; sleep 1000', { timeoutMs: 5_000 });
      expect(timedOut).toEqual({ output: 'waiting\n', exitCode: null, timedOut: true });
    });
  },
);
