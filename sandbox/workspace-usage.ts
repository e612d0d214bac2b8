import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** What a workspace holds: bytes allocated (like `du -s`) and entries (files, folders, links). */
export interface WorkspaceUsage {
  readonly bytes: number;
  readonly files: number;
  /** False when the count stopped early (at its cap, or once past a limit): the figures are a floor. */
  readonly complete: boolean;
}

/** A workspace's limits: bytes (SANDBOX_DISK) and entries (SANDBOX_FILES); 0 = none. */
export interface WorkspaceLimits {
  readonly bytes: number;
  readonly files: number;
}

/** What a command is watched against: the limits, and the workspace as last measured before it started. */
export interface WorkspaceQuota extends WorkspaceLimits {
  readonly usedBytes: number;
  readonly usedFiles: number;
}

/** The limit a command was stopped for: the workspace's size or its number of entries. */
export type QuotaStop = 'disk' | 'files';

/** Entries one measurement visits at most, unless a file limit needs more (the runner uses the same). */
export const SCAN_LIMIT = 200_000;

/** Enough entries to tell that a file limit is passed. */
export function scanCap(files: number): number {
  return Math.max(SCAN_LIMIT, files + 1);
}

/** lstat calls in flight at once while measuring a folder. */
const PARALLEL = 64;

/**
 * Measures `dir` like `du -s` plus an entry count: every file, folder and link below it counts as one
 * entry and its allocated blocks (a hard-linked file's once); links are not followed and other file
 * systems not entered. Stops after `cap` entries, or as soon as the count passes `stopAbove` (a
 * watch needs no more than that). A missing folder holds nothing.
 */
export async function measureDir(
  dir: string,
  options: { cap?: number; stopAbove?: Partial<WorkspaceLimits> } = {},
): Promise<WorkspaceUsage> {
  const cap = options.cap ?? SCAN_LIMIT;
  const stopBytes = options.stopAbove?.bytes ?? Number.POSITIVE_INFINITY;
  const stopFiles = options.stopAbove?.files ?? Number.POSITIVE_INFINITY;
  const root = await lstat(dir).catch(() => undefined);
  if (!root) return { bytes: 0, files: 0, complete: true };
  const linked = new Set<number>();
  let bytes = 0;
  let files = 0;
  const stack = [dir];
  const over = () => files >= cap || bytes > stopBytes || files > stopFiles;
  while (stack.length > 0 && !over()) {
    const current = stack.pop() as string;
    const names = await readdir(current).catch(() => [] as string[]);
    for (let start = 0; start < names.length && !over(); start += PARALLEL) {
      const batch = names.slice(start, start + PARALLEL).map((name) => path.join(current, name));
      const infos = await Promise.all(batch.map((full) => lstat(full).catch(() => undefined)));
      for (const [index, info] of infos.entries()) {
        if (over()) break;
        if (!info || info.dev !== root.dev) continue;
        files += 1;
        if (info.nlink > 1 && !info.isDirectory()) {
          if (linked.has(info.ino)) continue;
          linked.add(info.ino);
        }
        bytes += info.blocks * 512;
        if (info.isDirectory()) stack.push(batch[index] as string);
      }
    }
  }
  return { bytes, files, complete: stack.length === 0 && !over() };
}

/**
 * The allowance of one command: what it may leave in the workspace. Within a limit, the limit; a
 * workspace already over a limit may shrink (`rm` works) but not grow, so the allowance follows the
 * lowest size seen since the command started. The runner (sandbox/runner.py, Watch) keeps the same rule.
 */
export class Allowance {
  private bytes: number;
  private files: number;

  constructor(private readonly quota: WorkspaceQuota) {
    this.bytes = Math.max(quota.bytes, quota.usedBytes);
    this.files = Math.max(quota.files, quota.usedFiles);
  }

  /** Where a measurement may stop: past this, the command is stopped anyway. */
  get stopAbove(): Partial<WorkspaceLimits> {
    return {
      ...(this.quota.bytes > 0 ? { bytes: this.bytes } : {}),
      ...(this.quota.files > 0 ? { files: this.files } : {}),
    };
  }

  /** The limit the workspace is now past, or undefined; a complete measurement lowers the allowance. */
  judge(usage: WorkspaceUsage): QuotaStop | undefined {
    if (this.quota.bytes > 0 && usage.bytes > this.bytes) return 'disk';
    if (this.quota.files > 0 && usage.files > this.files) return 'files';
    if (usage.complete) {
      this.bytes = Math.max(this.quota.bytes, Math.min(this.bytes, usage.bytes));
      this.files = Math.max(this.quota.files, Math.min(this.files, usage.files));
    }
    return undefined;
  }
}

export function sizeLabel(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${Number((bytes / 1024 ** 3).toFixed(2))} GiB`;
  if (bytes >= 1024 ** 2) return `${Number((bytes / 1024 ** 2).toFixed(1))} MiB`;
  return `${Math.ceil(bytes / 1024)} KiB`;
}

export function countLabel(count: number): string {
  return count.toLocaleString('en-US');
}
