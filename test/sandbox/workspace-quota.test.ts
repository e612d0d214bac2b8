import { existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskQuota, parseDiskLimit } from '../../sandbox/disk-quota.js';
import { effectiveLimits, fileSystemOf } from '../../sandbox/workspace-fs.js';
import { hostFolderMeasure, measureCommand, parseMeasure } from '../../sandbox/workspace-measure.js';
import { Allowance, measureDir } from '../../sandbox/workspace-usage.js';
import { WorkspaceWatch } from '../../sandbox/workspace-watch.js';
import { readSettings } from '../../src/config/index.js';

const MiB = 1024 ** 2;
const folders: string[] = [];
function folder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'roundtable-quota-'));
  folders.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('SANDBOX_DISK and SANDBOX_FILES', () => {
  it('reads sizes, 0 for none, and names the variable when invalid', () => {
    expect(parseDiskLimit('1g')).toBe(1024 ** 3);
    expect(parseDiskLimit('500m')).toBe(500 * MiB);
    expect(parseDiskLimit('2t')).toBe(2 * 1024 ** 4);
    expect(parseDiskLimit('0')).toBe(0);
    expect(() => parseDiskLimit('lots')).toThrow(/SANDBOX_DISK/);
    expect(() => parseDiskLimit('10k')).toThrow(/SANDBOX_DISK/);
  });

  it('are checked with the other settings, naming the variable', () => {
    expect(() => readSettings({ SANDBOX_DISK: 'lots' })).toThrow(
      'environment: SANDBOX_DISK: expected a size such as 1g or 500m, or 0 for none (got "lots")',
    );
    expect(() => readSettings({ SANDBOX_FILES: '-1' })).toThrow(/^environment: SANDBOX_FILES: /);
    expect(() => readSettings({ SANDBOX_FILES: 'many' })).toThrow(/^environment: SANDBOX_FILES: /);
    expect(readSettings({}).SANDBOX_FILES).toBe(100_000);
    expect(readSettings({ SANDBOX_FILES: '0' }).SANDBOX_FILES).toBe(0);
  });
});

describe('measuring a workspace', () => {
  it('counts every file, folder and link, and the blocks they hold, a hard-linked file once', async () => {
    const dir = folder();
    mkdirSync(path.join(dir, 'a/b'), { recursive: true });
    writeFileSync(path.join(dir, 'a/data'), Buffer.alloc(MiB, 1));
    linkSync(path.join(dir, 'a/data'), path.join(dir, 'a/b/same'));
    symlinkSync('/etc', path.join(dir, 'link'));
    writeFileSync(path.join(dir, 'empty'), '');
    const usage = await measureDir(dir);
    expect(usage.files).toBe(6); // a, a/b, a/data, a/b/same, link, empty
    expect(usage.complete).toBe(true);
    expect(usage.bytes).toBeGreaterThanOrEqual(MiB);
    expect(usage.bytes).toBeLessThan(2 * MiB);
  });

  it('holds nothing when the folder does not exist', async () => {
    expect(await measureDir(path.join(folder(), 'nowhere'))).toEqual({ bytes: 0, files: 0, complete: true });
  });

  it('stops early past a limit, and says the figures are a floor', async () => {
    const dir = folder();
    for (let i = 0; i < 300; i += 1) writeFileSync(path.join(dir, `f${i}`), '');
    const usage = await measureDir(dir, { stopAbove: { files: 10 } });
    expect(usage.complete).toBe(false);
    expect(usage.files).toBeGreaterThan(10);
    expect(usage.files).toBeLessThan(300);
    expect((await measureDir(dir, { cap: 100 })).files).toBe(100);
  });
});

describe('what a command may leave in the workspace', () => {
  const full = (bytes: number, files: number) => ({ bytes, files, complete: true });

  it('stops a command that takes the workspace past either limit', () => {
    const allowance = new Allowance({ bytes: 100, files: 10, usedBytes: 50, usedFiles: 5 });
    expect(allowance.judge(full(100, 10))).toBeUndefined();
    expect(allowance.judge(full(101, 10))).toBe('disk');
    expect(allowance.judge(full(100, 11))).toBe('files');
  });

  it('lets a workspace already over a limit shrink, not grow again', () => {
    const allowance = new Allowance({ bytes: 100, files: 10, usedBytes: 150, usedFiles: 20 });
    expect(allowance.judge(full(150, 20))).toBeUndefined();
    expect(allowance.judge(full(120, 15))).toBeUndefined(); // rm
    expect(allowance.judge(full(130, 15))).toBe('disk'); // then writing again
    expect(new Allowance({ bytes: 100, files: 10, usedBytes: 150, usedFiles: 20 }).judge(full(150, 21))).toBe('files');
  });

  it('does not lower the allowance on a measurement that stopped early', () => {
    const allowance = new Allowance({ bytes: 100, files: 0, usedBytes: 150, usedFiles: 0 });
    expect(allowance.judge({ bytes: 110, files: 3, complete: false })).toBeUndefined();
    expect(allowance.judge(full(150, 3))).toBeUndefined();
  });

  it('ignores a limit of 0', () => {
    const allowance = new Allowance({ bytes: 0, files: 0, usedBytes: 0, usedFiles: 0 });
    expect(allowance.judge(full(10 ** 12, 10 ** 7))).toBeUndefined();
    expect(allowance.stopAbove).toEqual({});
  });
});

describe('watching a workspace from the host (the one-exec path)', () => {
  it('aborts while files are being created past SANDBOX_FILES, and says which limit', async () => {
    const dir = folder();
    const watch = new WorkspaceWatch(
      dir,
      { bytes: 0, files: 50, usedBytes: 0, usedFiles: 0 },
      { intervalMs: 20, costFactor: 3 },
    );
    let created = 0;
    while (!watch.signal.aborted && created < 20_000) {
      await writeFile(path.join(dir, `f${created}`), '');
      created += 1;
    }
    expect(watch.finish()).toBe('files');
    expect(created).toBeGreaterThan(50);
    expect(created).toBeLessThan(20_000);
  });

  it('aborts once the files written add up past SANDBOX_DISK, none of them past it alone', async () => {
    const dir = folder();
    const watch = new WorkspaceWatch(
      dir,
      { bytes: 4 * MiB, files: 0, usedBytes: 0, usedFiles: 0 },
      { intervalMs: 20, costFactor: 3 },
    );
    let written = 0;
    while (!watch.signal.aborted && written < 400) {
      await writeFile(path.join(dir, `part${written}`), Buffer.alloc(MiB / 4, 1));
      written += 1;
    }
    expect(watch.finish()).toBe('disk');
    expect(written).toBeGreaterThan(16);
    expect(written).toBeLessThan(400);
  });
});

describe('the file system under the workspaces', () => {
  it('names tmpfs, and looks at the nearest existing folder', async () => {
    if (existsSync('/dev/shm')) expect(await fileSystemOf('/dev/shm/roundtable/not/yet')).toBe('tmpfs');
    expect(await fileSystemOf(path.join(folder(), 'workspaces'))).toMatch(/^[a-z0-9]+$/);
  });

  it('in memory, keeps the allowance to half of SANDBOX_MEMORY, with a reason', () => {
    const configured = { bytes: 1024 ** 3, files: 100_000 };
    expect(effectiveLimits(configured, 512 * MiB, 'ext4')).toEqual({ limits: configured });
    expect(effectiveLimits(configured, 512 * MiB, 'xfs')).toEqual({ limits: configured });
    const tmpfs = effectiveLimits(configured, 512 * MiB, 'tmpfs');
    expect(tmpfs.limits).toEqual({ bytes: 256 * MiB, files: 100_000 });
    expect(tmpfs.lowered).toMatch(/tmpfs, in memory/);
    expect(effectiveLimits({ bytes: 0, files: 0 }, 64 * MiB, 'tmpfs').limits).toEqual({ bytes: 32 * MiB, files: 0 });
    expect(effectiveLimits({ bytes: 10 * MiB, files: 0 }, 64 * MiB, 'tmpfs')).toEqual({
      limits: { bytes: 10 * MiB, files: 0 },
    });
  });
});

describe('DiskQuota', () => {
  it('is off with limits of 0: no cap, no watch, no note, no refusal, nothing measured', async () => {
    const quota = new DiskQuota({ bytes: 0, files: 0 }, async () => {
      throw new Error('measured');
    });
    expect(await quota.beforeCommand('k')).toEqual({ fsize: undefined, quota: undefined });
    const huge = { bytes: 10 ** 12, files: 10 ** 7, complete: true };
    expect(await quota.afterCommand('k', huge, undefined)).toBeUndefined();
    await expect(quota.beforeWrite('k', 10 ** 12, 10 ** 7)).resolves.toBeUndefined();
  });

  it('measures through its source (a host folder or the container), with a cap that can tell a file limit is passed', async () => {
    const asked: Array<[string, number]> = [];
    const quota = new DiskQuota({ bytes: 4 * MiB, files: 300_000 }, async (key, { cap }) => {
      asked.push([key, cap]);
      return { bytes: MiB, files: 7, complete: true };
    });
    expect(await quota.beforeCommand('room')).toEqual({
      fsize: 3 * MiB,
      quota: { bytes: 4 * MiB, files: 300_000, usedBytes: MiB, usedFiles: 7 },
    });
    // After a command the runner did not measure (the one-exec path), the source is asked again.
    expect(await quota.afterCommand('room', undefined, undefined)).toBeUndefined();
    expect(asked).toEqual([
      ['room', 300_001],
      ['room', 300_001],
    ]);
  });

  it('gives the next command what is left and the workspace as last measured', async () => {
    const dir = folder();
    writeFileSync(path.join(dir, 'data'), Buffer.alloc(MiB, 1));
    const quota = new DiskQuota(
      { bytes: 4 * MiB, files: 10 },
      hostFolderMeasure(() => dir),
    );
    const next = await quota.beforeCommand('k');
    expect(next.fsize).toBeGreaterThan(2 * MiB);
    expect(next.fsize).toBeLessThanOrEqual(3 * MiB);
    expect(next.quota).toMatchObject({ bytes: 4 * MiB, files: 10, usedFiles: 1 });
    await quota.afterCommand('k', { bytes: 5 * MiB, files: 3, complete: true }, undefined);
    expect(await quota.beforeCommand('k')).toEqual({
      fsize: 0,
      quota: { bytes: 4 * MiB, files: 10, usedBytes: 5 * MiB, usedFiles: 3 },
    });
  });

  it('says why a command was stopped and how much the workspace holds', async () => {
    const quota = new DiskQuota(
      { bytes: 100 * MiB, files: 5000 },
      hostFolderMeasure(() => '/nowhere'),
    );
    expect(await quota.afterCommand('k', { bytes: 143.2 * MiB, files: 812, complete: true }, 'disk')).toBe(
      '[ERROR: stopped: the workspace went past its 100 MiB disk limit (SANDBOX_DISK) while this command ran; ' +
        'it holds 143.2 MiB (812 files and folders). Remove files to make room (rm works); until then a command ' +
        'that adds to it is stopped]',
    );
    expect(await quota.afterCommand('k', { bytes: 0, files: 5697, complete: false }, 'files')).toBe(
      '[ERROR: stopped: the workspace went past its limit of 5,000 files and folders (SANDBOX_FILES) while this ' +
        'command ran; it holds at least 5,697 files and folders (0 KiB). Remove files to make room (rm works); ' +
        'until then a command that adds to it is stopped]',
    );
    expect(await quota.afterCommand('k', { bytes: 0, files: 5001, complete: true }, undefined)).toBe(
      '[ERROR: the workspace holds 5,001 files and folders, over its limit of 5,000 (SANDBOX_FILES): a command ' +
        'that adds more is stopped until some are removed]',
    );
  });

  it('says when the workspace holds its whole disk allowance, as the next command can write nothing', async () => {
    const quota = new DiskQuota(
      { bytes: 100 * MiB, files: 5000 },
      hostFolderMeasure(() => '/nowhere'),
    );
    // A command whose writes past the allowance the file-size limit refused, each whole (fallocate, one write).
    expect(await quota.afterCommand('k', { bytes: 100 * MiB, files: 26, complete: true }, undefined)).toBe(
      '[ERROR: the workspace holds 100 MiB, all of its 100 MiB limit (SANDBOX_DISK): writing files is refused ' +
        'until some are removed]',
    );
    expect((await quota.beforeCommand('k')).fsize).toBe(0);
    expect(await quota.afterCommand('k', { bytes: 100 * MiB - 4096, files: 26, complete: true }, undefined)).toBe(
      undefined,
    );
  });

  it('refuses a file-tool write past either limit before it happens', async () => {
    const dir = folder();
    for (let i = 0; i < 8; i += 1) writeFileSync(path.join(dir, `f${i}`), '');
    const quota = new DiskQuota(
      { bytes: 4 * MiB, files: 10 },
      hostFolderMeasure(() => dir),
    );
    await expect(quota.beforeWrite('k', 1024, 2)).resolves.toBeUndefined();
    await expect(quota.beforeWrite('k', 1024, 3)).rejects.toThrow(
      'the workspace is full: it holds 8 files and folders of its limit of 10 (SANDBOX_FILES), and this would ' +
        'add 3; remove files first',
    );
    await expect(quota.beforeWrite('k', 5 * MiB, 1)).rejects.toThrow(/\(SANDBOX_DISK\), and this would add 5/);
  });
});

describe('measuring a workspace in its container (volume workspaces)', () => {
  it('asks du for the bytes and find for the entries, NUL-counted and capped', () => {
    expect(measureCommand(200_000)).toBe(
      "cd /workspace || exit 3; du -skx . 2>/dev/null; find . -xdev -print0 2>/dev/null | tr -cd '\\000' | head -c 200001 | wc -c",
    );
  });

  it('reads bytes and entries as measureDir gives them (the folder itself not counted), a floor at the cap', () => {
    expect(parseMeasure('108\t.\n5\n', 200_000)).toEqual({ bytes: 108 * 1024, files: 4, complete: true });
    expect(parseMeasure('4\t.\n1\n', 10)).toEqual({ bytes: 4096, files: 0, complete: true });
    expect(parseMeasure('900\t.\n11\n', 10)).toEqual({ bytes: 900 * 1024, files: 10, complete: false });
    expect(parseMeasure('du: cannot access', 10)).toBeUndefined();
  });
});
