import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskQuota, measureDir, parseDiskLimit } from '../../sandbox/disk-quota.js';
import { hostFolderMeasure } from '../../sandbox/workspace-measure.js';
import { runDockerTests, SandboxHarness } from './docker-harness.js';

describe('SANDBOX_DISK', () => {
  it('reads sizes, 0 for none, and names the variable when invalid', () => {
    expect(parseDiskLimit('1g')).toBe(1024 ** 3);
    expect(parseDiskLimit('500m')).toBe(500 * 1024 ** 2);
    expect(parseDiskLimit('0')).toBe(0);
    expect(() => parseDiskLimit('lots')).toThrow(/SANDBOX_DISK/);
    expect(() => parseDiskLimit('10k')).toThrow(/SANDBOX_DISK/);
  });
});

// Both paths keep the same promises: the command runner (default) and one exec per command (its fallback).
describe.skipIf(!runDockerTests).each([
  { path: 'command runner', commandRunner: true },
  { path: 'one exec per command', commandRunner: false },
])('workspace disk allowance (real engine, $path)', ({ commandRunner }) => {
  const harness = new SandboxHarness();
  const sandbox = harness.create({ SANDBOX_DISK: '20m' }, { commandRunner });
  afterAll(() => harness.cleanup());
  const run = (key: string, command: string) => sandbox.exec(key, command, { timeoutMs: 30_000 });

  it('lets no command write a file past what is left, and the command cannot lift the limit', async () => {
    const key = `console:disk-file-${commandRunner}`;
    const result = await run(key, 'ulimit -f unlimited; head -c 50M /dev/zero > big; echo exit=$?');
    expect(result.output).toMatch(/File size limit exceeded|exit=153/);
    const file = path.join(sandbox.workspaceDir?.(key) ?? '', 'big');
    expect(statSync(file).size).toBeLessThanOrEqual(20 * 1024 ** 2);
  });

  it('refuses writing once the workspace is over its allowance, until files are removed', async () => {
    const key = `console:disk-many-${commandRunner}`;
    const fill = await run(key, 'for i in 1 2 3; do head -c 9M /dev/zero > part$i; done; echo written');
    expect(fill.output).toContain('written');
    expect(fill.output).toMatch(/\[ERROR: the workspace holds 2\d(\.\d)? MiB, over its 20 MiB limit \(SANDBOX_DISK\)/);
    const refused = await run(key, 'echo more > more.txt');
    expect(refused.exitCode).not.toBe(0); // SIGXFSZ: the write was refused
    expect(refused.output).toContain('writing files is refused until some are removed');
    expect(statSync(path.join(sandbox.workspaceDir?.(key) ?? '', 'more.txt')).size).toBe(0);
    const freed = await run(key, 'rm part1 part2 && echo removed');
    expect(freed.output).toBe('removed\n');
    const again = await run(key, 'echo more > more.txt && cat more.txt');
    expect(again.output).toBe('more\n');
  });

  it('refuses a file-tool write that would overfill the workspace, before writing', async () => {
    const key = `console:disk-tool-${commandRunner}`;
    await run(key, 'head -c 15M /dev/zero > data.bin');
    await expect(sandbox.checkDisk?.(key, 1024)).resolves.toBeUndefined();
    await expect(sandbox.checkDisk?.(key, 10 * 1024 ** 2)).rejects.toThrow(
      /the workspace is full: it holds 15(\.\d)? MiB of its 20 MiB limit \(SANDBOX_DISK\), and this would add 10 MiB/,
    );
  });
});

describe('DiskQuota without Docker', () => {
  it('measures what a folder holds, and none for a missing one', async () => {
    const dir = path.resolve(import.meta.dirname);
    expect(await measureDir(dir)).toBeGreaterThan(0);
    expect(await measureDir(path.join(dir, 'no-such-folder'))).toBe(0);
    expect(existsSync(dir)).toBe(true);
  });

  it('is off with a limit of 0: no cap, no note, no refusal', async () => {
    const quota = new DiskQuota(
      0,
      hostFolderMeasure(() => '/nowhere'),
    );
    expect(await quota.beforeCommand('k')).toBeUndefined();
    expect(await quota.afterCommand('k', 10 ** 12)).toBeUndefined();
    await expect(quota.beforeWrite('k', 10 ** 12)).resolves.toBeUndefined();
  });
});
