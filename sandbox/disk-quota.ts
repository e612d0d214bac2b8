import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, SandboxError } from '../src/errors.js';

/** Bytes allocated in a channel's workspace, like `du -s` (sandbox/workspace-measure.ts: host folder or container). */
export type MeasureWorkspace = (channelKey: string) => Promise<number>;

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** `SANDBOX_DISK`: a size such as `1g` or `500m`; `0` means no limit. */
export function parseDiskLimit(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([bkmgt]?)b?$/i.exec(value.trim());
  const unit = UNITS[match?.[2]?.toLowerCase() ?? ''];
  const bytes = match && unit ? Math.floor(Number(match[1]) * unit) : Number.NaN;
  if (!Number.isFinite(bytes) || (bytes > 0 && bytes < 1024 ** 2)) {
    throw new ConfigError(
      'environment',
      'SANDBOX_DISK',
      `expected a size such as 1g or 500m, or 0 for none (got "${value}")`,
    );
  }
  return bytes;
}

/** Entries one host-side measurement visits at most (a huge tree counts as at least what was seen). */
const SCAN_LIMIT = 200_000;

/** Bytes allocated under `dir`, like `du -s`: links not followed; 0 when it does not exist. */
export async function measureDir(dir: string): Promise<number> {
  let total = 0;
  let seen = 0;
  const stack = [dir];
  while (stack.length > 0 && seen < SCAN_LIMIT) {
    const current = stack.pop() as string;
    let names: string[];
    try {
      names = await readdir(current);
    } catch {
      continue;
    }
    for (const name of names) {
      seen += 1;
      const full = path.join(current, name);
      const info = await lstat(full).catch(() => undefined);
      if (!info) continue;
      total += info.blocks * 512;
      if (info.isDirectory()) stack.push(full);
    }
  }
  return total;
}

export function sizeLabel(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${Number((bytes / 1024 ** 3).toFixed(2))} GiB`;
  if (bytes >= 1024 ** 2) return `${Number((bytes / 1024 ** 2).toFixed(1))} MiB`;
  return `${Math.ceil(bytes / 1024)} KiB`;
}

/**
 * The workspace's disk allowance (SANDBOX_DISK), per channel. A command may grow no file past what is left
 * (RLIMIT_FSIZE, set in the container); after each command the workspace is measured, and while it is over
 * the limit every command runs with no room to write and says so, until files are removed. File-tool writes
 * are checked before they happen.
 */
export class DiskQuota {
  /** Bytes in each channel's workspace, as last measured (absent: measure before use). */
  private readonly used = new Map<string, number>();

  constructor(
    readonly limit: number,
    private readonly measure: MeasureWorkspace,
  ) {}

  get enabled(): boolean {
    return this.limit > 0;
  }

  /** The file-size cap for the next command: what is left of the allowance (undefined: no limit). */
  async beforeCommand(key: string): Promise<number | undefined> {
    if (!this.enabled) return undefined;
    const used = this.used.get(key) ?? (await this.measure(key));
    return Math.max(0, this.limit - used);
  }

  /** Records the size after a command (measured in the container, else here); a note when it is over. */
  async afterCommand(key: string, measured: number | undefined): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    const used = measured ?? (await this.measure(key));
    this.used.set(key, used);
    if (used <= this.limit) return undefined;
    return (
      `[ERROR: the workspace holds ${sizeLabel(used)}, over its ${sizeLabel(this.limit)} limit (SANDBOX_DISK): ` +
      'writing files is refused until some are removed]'
    );
  }

  /** Throws when writing `adding` bytes from outside (the file tools) would go over the allowance. */
  async beforeWrite(key: string, adding: number): Promise<void> {
    if (!this.enabled) return;
    const used = await this.measure(key);
    this.used.delete(key); // the write changes it: the next command measures again
    if (used + adding <= this.limit) return;
    throw new SandboxError(
      `the workspace is full: it holds ${sizeLabel(used)} of its ${sizeLabel(this.limit)} limit (SANDBOX_DISK), ` +
        `and this would add ${sizeLabel(adding)}; remove files first`,
    );
  }

  /** The workspace was wiped or changed outside: measure again. */
  forget(key: string): void {
    this.used.delete(key);
  }
}
