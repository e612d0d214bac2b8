import { afterAll, describe, expect, it } from 'vitest';
import { DOCKER_TEST_TIMEOUT, runDockerTests, SandboxHarness } from './docker-harness.js';

const MiB = 1024 ** 2;
const FILES = 100_000;
const DISK = 100 * MiB;
/** What a command may leave past an allowance: a tenth of it. */
const FILES_MARGIN = FILES / 10;
const DISK_MARGIN = DISK / 10;
const STOPPED_FILES = '[ERROR: stopped: the workspace went past its limit of 100,000 files and folders (SANDBOX_FILES)';
const STOPPED_DISK = '[ERROR: stopped: the workspace went past its 100 MiB disk limit (SANDBOX_DISK)';

/** Entries below the workspace and KiB it holds, asked of the container (so the same for a folder and a volume). */
const COUNT = 'echo "$(find . -xdev -mindepth 1 -printf x | wc -c) $(du -skx . | cut -f1)"';

// Fast writers against the command runner's watch: each pattern must be stopped within a tenth of the allowance,
// with the one line that says so, and the next command must run. The workspace is an in-memory folder (tmpfs) or
// a Docker volume (ext4 here).
describe.skipIf(!runDockerTests).each([
  { where: 'in memory (tmpfs folder)', parent: '/dev/shm', env: { SANDBOX_MEMORY: '1g' } },
  { where: 'on a volume', parent: undefined, env: { SANDBOX_WORKSPACES: 'volume' } },
])('fast writers against the workspace allowance ($where)', { timeout: 4 * DOCKER_TEST_TIMEOUT }, ({ parent, env }) => {
  const harness = new SandboxHarness(parent);
  const sandbox = harness.create({ SANDBOX_DISK: '100m', SANDBOX_FILES: String(FILES), ...env });
  afterAll(() => harness.cleanup());
  const run = (key: string, command: string, timeoutMs = 120_000) => sandbox.exec(key, command, { timeoutMs });

  /** Runs `flood`, checks it was stopped for `kind` within the margin, then that rm and a new command work. */
  async function expectHeld(key: string, flood: string, kind: 'files' | 'disk'): Promise<void> {
    const result = await run(key, `${flood}; echo finished`);
    // The first line: a workspace over a limit adds its note below.
    const [count, kib] = ((await run(key, COUNT)).output.split('\n')[0] ?? '').split(' ').map(Number);
    const held = { files: count ?? Number.NaN, bytes: (kib ?? Number.NaN) * 1024 };
    expect(result.output, `${flood}: ${held.files} entries, ${held.bytes} bytes`).toContain(
      kind === 'files' ? STOPPED_FILES : STOPPED_DISK,
    );
    expect(result.output).not.toContain('finished');
    // Its one line (a fallocate killed midway on tmpfs gives its blocks back, so what is left may be under the limit).
    expect(result.output.match(/\[ERROR:/g)).toHaveLength(1);
    if (kind === 'files') expect(held.files, `${flood}: entries left`).toBeLessThanOrEqual(FILES + FILES_MARGIN);
    else expect(held.bytes, `${flood}: bytes left`).toBeLessThanOrEqual(DISK + DISK_MARGIN);
    const freed = await run(key, 'find . -mindepth 1 -delete && echo removed');
    expect(freed).toEqual({ output: 'removed\n', exitCode: 0, timedOut: false });
    expect(await run(key, 'echo ok > ok.txt && cat ok.txt')).toEqual({ output: 'ok\n', exitCode: 0, timedOut: false });
  }

  it('stops seq | xargs touch within a tenth of SANDBOX_FILES', async () => {
    await expectHeld('console:flood-xargs', 'seq 1 300000 | xargs touch', 'files');
  });

  it('stops four parallel xargs within a tenth of SANDBOX_FILES', async () => {
    const four = 'for p in 1 2 3 4; do mkdir d$p; (cd d$p && seq 1 100000 | xargs touch) & done; wait';
    await expectHeld('console:flood-four', four, 'files');
  });

  it('stops dd writing file after file within a tenth of SANDBOX_DISK', async () => {
    await expectHeld(
      'console:flood-dd',
      'for i in 1 2 3 4; do dd if=/dev/zero of=f$i bs=1M count=90 2>/dev/null; done',
      'disk',
    );
  });

  it('stops fallocate file after file within a tenth of SANDBOX_DISK', async () => {
    await expectHeld('console:flood-fallocate', 'for i in $(seq 1 40); do fallocate -l 9M f$i; done', 'disk');
  });

  it('stops many small files within a tenth of SANDBOX_DISK', async () => {
    await expectHeld('console:flood-small', 'head -c 400M /dev/zero | split -b 64K -a 4', 'disk');
  });
});
