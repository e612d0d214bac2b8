import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { measureDir } from '../../sandbox/workspace-usage.js';
import { DOCKER_TEST_TIMEOUT, runDockerTests, SandboxHarness } from './docker-harness.js';

const MiB = 1024 ** 2;
const STOPPED_DISK =
  /\[ERROR: stopped: the workspace went past its 20 MiB disk limit \(SANDBOX_DISK\) while this command ran; it holds (at least )?\d+(\.\d)? MiB \(\d+ files and folders\)\. Remove files to make room \(rm works\)/;
const STOPPED_FILES =
  /\[ERROR: stopped: the workspace went past its limit of 500 files and folders \(SANDBOX_FILES\) while this command ran; it holds (at least )?[\d,]+ files and folders/;

// Both paths keep the same promises: the command runner (default), which watches the workspace from
// inside the container, and one exec per command (its fallback), watched from the bridge.
describe.skipIf(!runDockerTests).each([
  { path: 'command runner', commandRunner: true },
  { path: 'one exec per command', commandRunner: false },
])('workspace disk allowance (real engine, $path)', { timeout: DOCKER_TEST_TIMEOUT }, ({ commandRunner }) => {
  const harness = new SandboxHarness();
  const sandbox = harness.create({ SANDBOX_DISK: '20m', SANDBOX_FILES: '500' }, { commandRunner });
  afterAll(() => harness.cleanup());
  const run = (key: string, command: string) => sandbox.exec(key, command, { timeoutMs: 60_000 });
  const workspace = (key: string) => sandbox.workspaceDir?.(key) ?? '';

  it('lets no command write a file past what is left, and the command cannot lift the limit', async () => {
    const key = `console:disk-file-${commandRunner}`;
    const result = await run(key, 'ulimit -f unlimited; head -c 50M /dev/zero > big; echo exit=$?');
    expect(result.output).toMatch(/File size limit exceeded|exit=153/);
    expect(statSync(path.join(workspace(key), 'big')).size).toBeLessThanOrEqual(20 * MiB);
  });

  it('stops a command whose files, each under the limit, take the workspace past SANDBOX_DISK; rm still works', async () => {
    const key = `console:disk-many-${commandRunner}`;
    // Eight files of 9 MiB, each well under what is left: RLIMIT_FSIZE alone lets all 72 MiB through.
    const fill = await run(
      key,
      'for i in 1 2 3 4 5 6 7 8; do head -c 9M /dev/zero > part$i; sleep 0.5; done; echo finished',
    );
    expect(fill.output).not.toContain('finished');
    expect(fill.output).toMatch(STOPPED_DISK);
    expect(fill.exitCode === null || fill.exitCode === 137).toBe(true);
    // Stopped within a look or two of crossing 20 MiB (the third file), not after the eighth.
    const held = await measureDir(workspace(key));
    expect(held.bytes).toBeGreaterThan(20 * MiB);
    expect(held.bytes).toBeLessThanOrEqual(5 * 9 * MiB + MiB);

    const refused = await run(key, 'echo more > more.txt');
    expect(refused.exitCode).not.toBe(0); // SIGXFSZ: the write was refused
    expect(refused.output).toContain(
      'over its 20 MiB limit (SANDBOX_DISK): writing files is refused until some are removed',
    );
    expect(statSync(path.join(workspace(key), 'more.txt')).size).toBe(0);

    const freed = await run(key, 'rm part* && echo removed');
    expect(freed).toEqual({ output: 'removed\n', exitCode: 0, timedOut: false });
    const again = await run(key, 'echo more > more.txt && cat more.txt');
    expect(again).toEqual({ output: 'more\n', exitCode: 0, timedOut: false });
  });

  it('stops a command creating empty files past SANDBOX_FILES; rm still works', async () => {
    const key = `console:disk-count-${commandRunner}`;
    const flood = await run(key, 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); : > e$i; done; echo finished');
    expect(flood.output).not.toContain('finished');
    expect(flood.output).toMatch(STOPPED_FILES);
    const count = readdirSync(workspace(key)).length;
    expect(count).toBeGreaterThan(500);
    expect(count).toBeLessThan(20_000);

    // Either it ends before the watch sees it add an entry (the note), or the watch stops it (the stop line).
    const more = await run(key, 'mkdir d && echo made');
    const note = /over its limit of 500 \(SANDBOX_FILES\): a command that adds more is stopped/;
    expect(more.output).toMatch(new RegExp(`${note.source}|${STOPPED_FILES.source}`));
    const freed = await run(key, 'rm -rf e* d && echo removed');
    expect(freed).toEqual({ output: 'removed\n', exitCode: 0, timedOut: false });
    expect(readdirSync(workspace(key))).toEqual([]);
  });

  it('stops a command that grows old files in place past SANDBOX_DISK (no new entry, no recent change)', async () => {
    const key = `console:disk-old-${commandRunner}`;
    await run(key, 'head -c 1M /dev/zero > old1; head -c 1M /dev/zero > old2');
    // Old by the time they grow: the runner's looks take unchanged files as they were; its full pass must see them.
    const grow = await run(
      key,
      'sleep 2.5; for f in old1 old2; do head -c 12M /dev/zero >> $f; done; sleep 20; echo finished',
    );
    expect(grow.output).not.toContain('finished');
    expect(grow.output).toMatch(STOPPED_DISK);
  });

  it('leaves a command alone that stays within the limits', async () => {
    const key = `console:disk-within-${commandRunner}`;
    const result = await run(
      key,
      'for i in 1 2 3; do head -c 4M /dev/zero > f$i; sleep 0.3; done; rm f1; echo finished',
    );
    expect(result).toEqual({ output: 'finished\n', exitCode: 0, timedOut: false });
  });

  it('refuses a file-tool write that would overfill the workspace, before writing', async () => {
    const key = `console:disk-tool-${commandRunner}`;
    await run(key, 'head -c 15M /dev/zero > data.bin');
    await expect(sandbox.checkDisk?.(key, 1024)).resolves.toBeUndefined();
    await expect(sandbox.checkDisk?.(key, 10 * MiB)).rejects.toThrow(
      /the workspace is full: it holds 15(\.\d)? MiB of its 20 MiB limit \(SANDBOX_DISK\), and this would add 10 MiB/,
    );
  });
});

// A volume is out of the bridge's sight: on the one-exec path nothing watches it while a command runs, and it is
// measured in the container once the command ends (the command runner watches a volume as it does a host folder).
describe.skipIf(!runDockerTests)(
  'workspace disk allowance (real engine, volume workspaces, one exec per command)',
  { timeout: DOCKER_TEST_TIMEOUT },
  () => {
    const harness = new SandboxHarness();
    const sandbox = harness.create(
      { SANDBOX_WORKSPACES: 'volume', SANDBOX_DISK: '20m', SANDBOX_FILES: '500' },
      { commandRunner: false },
    );
    afterAll(() => harness.cleanup());
    const run = (key: string, command: string) => sandbox.exec(key, command, { timeoutMs: 60_000 });

    it('caps each file, measures the volume in the container after the command, and refuses more until rm', async () => {
      const key = 'console:disk-volume-exec';
      const big = await run(key, 'head -c 50M /dev/zero > big; echo exit=$?');
      expect(big.output).toMatch(/File size limit exceeded|exit=153/);
      const [first, ...rest] = (await run(key, 'wc -c < big')).output.split('\n');
      const size = Number(first);
      expect(size).toBeGreaterThan(19 * MiB);
      expect(size).toBeLessThanOrEqual(20 * MiB);
      // Full to the byte, the workspace says so: the next command can write nothing.
      if (size === 20 * MiB) expect(rest.join('\n')).toContain('all of its 20 MiB limit (SANDBOX_DISK)');
      await run(key, 'rm big');
      // Three files, each under the cap: nothing watches the volume on this path, so the command runs to its end.
      const more = await run(key, 'for i in 1 2 3; do head -c 9M /dev/zero > part$i; done; echo finished');
      expect(more.output).toMatch(/^finished\n\[ERROR: the workspace holds 27(\.\d)? MiB, over its 20 MiB limit/);
      const over = await run(key, 'echo more > more.txt');
      expect(over.exitCode).not.toBe(0);
      expect(over.output).toMatch(/over its 20 MiB limit \(SANDBOX_DISK\): writing files is refused/);
      await expect(sandbox.checkDisk?.(key, 1024)).rejects.toThrow(/the workspace is full/);
      expect(await run(key, 'rm -f part* more.txt && echo removed')).toEqual({
        output: 'removed\n',
        exitCode: 0,
        timedOut: false,
      });
      await expect(sandbox.checkDisk?.(key, 1024)).resolves.toBeUndefined();
    });

    it('counts the entries of a volume in the container: over SANDBOX_FILES it says so, and file tools are refused', async () => {
      const key = 'console:disk-volume-count';
      const flood = await run(key, 'mkdir many && cd many && seq 1 600 | xargs touch && echo made');
      expect(flood.output).toContain(
        '[ERROR: the workspace holds 601 files and folders, over its limit of 500 (SANDBOX_FILES)',
      );
      await expect(sandbox.checkDisk?.(key, 0, 1)).rejects.toThrow(/601 files and folders of its limit of 500/);
      expect((await run(key, 'rm -rf many && ls -A | wc -l')).output).toBe('0\n');
      await expect(sandbox.checkDisk?.(key, 0, 1)).resolves.toBeUndefined();
    });
  },
);

// A data folder on tmpfs: the workspace's files count against the container's memory, so the allowance
// is kept to half of SANDBOX_MEMORY, and a fresh container takes over if memory runs out anyway.
describe.skipIf(!runDockerTests).each([
  { path: 'command runner', commandRunner: true },
  { path: 'one exec per command', commandRunner: false },
])(
  'workspace disk allowance in memory (real engine, tmpfs, $path)',
  { timeout: DOCKER_TEST_TIMEOUT },
  ({ commandRunner }) => {
    const harness = new SandboxHarness('/dev/shm');
    const sandbox = harness.create({ SANDBOX_DISK: '1g', SANDBOX_MEMORY: '64m' }, { commandRunner });
    afterAll(() => harness.cleanup());
    const run = (key: string, command: string) => sandbox.exec(key, command, { timeoutMs: 60_000 });

    it('keeps a file to half the memory, so rm still runs afterwards', async () => {
      const key = `console:disk-tmpfs-one-${commandRunner}`;
      // Before: the file grew to the memory limit, and every later command, rm included, was killed.
      const big = await run(key, 'head -c 100M /dev/zero > big; echo rc=$?');
      expect(big.output).toMatch(/File size limit exceeded[\s\S]*rc=153/);
      expect(statSync(path.join(sandbox.workspaceDir?.(key) ?? '', 'big')).size).toBe(32 * MiB);
      expect(await run(key, 'rm -f big && echo removed')).toEqual({
        output: 'removed\n',
        exitCode: 0,
        timedOut: false,
      });
    });

    it('stops parallel writers (or replaces a container that ran out of memory), and rm still runs afterwards', async () => {
      const key = `console:disk-tmpfs-many-${commandRunner}`;
      const flood = await run(key, 'for i in $(seq 16); do head -c 20M /dev/zero > f$i & done; wait; echo finished');
      expect(flood.output).not.toContain('finished');
      // Stopped by the watch, or (the watch's turn late on a loaded machine) told the workspace is over its limit.
      expect(flood.output).toMatch(
        /32 MiB disk limit \(SANDBOX_DISK\)|over its 32 MiB limit \(SANDBOX_DISK\)|out of memory/,
      );
      const freed = await run(key, 'rm -f f* && echo removed');
      expect(freed).toEqual({ output: 'removed\n', exitCode: 0, timedOut: false });
      const after = await run(key, 'head -c 8M /dev/zero > ok && echo written');
      expect(after).toEqual({ output: 'written\n', exitCode: 0, timedOut: false });
    });
  },
);
