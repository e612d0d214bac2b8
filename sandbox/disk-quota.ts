import { diskLimitBytes } from '../src/config/sandbox-values.js';
import { ConfigError, SandboxError } from '../src/errors.js';
import {
  countLabel,
  type QuotaStop,
  scanCap,
  sizeLabel,
  type WorkspaceLimits,
  type WorkspaceQuota,
  type WorkspaceUsage,
} from './workspace-usage.js';

/**
 * What a channel's workspace holds now, bytes and entries (sandbox/workspace-measure.ts: a host folder measured
 * here, or a volume measured in its container); the count may stop after `cap` entries (then it is a floor).
 */
export type MeasureWorkspace = (channelKey: string, options: { readonly cap: number }) => Promise<WorkspaceUsage>;

/** `SANDBOX_DISK`: a size such as `1g` or `500m`; `0` means no limit. */
export function parseDiskLimit(value: string): number {
  const bytes = diskLimitBytes(value);
  if (bytes === undefined) {
    throw new ConfigError(
      'environment',
      'SANDBOX_DISK',
      `expected a size such as 1g or 500m, or 0 for none (got "${value}")`,
    );
  }
  return bytes;
}

/** What the next command runs with: the file-size cap (RLIMIT_FSIZE) and what its watch enforces. */
export interface CommandQuota {
  readonly fsize: number | undefined;
  readonly quota: WorkspaceQuota | undefined;
}

const NONE: CommandQuota = { fsize: undefined, quota: undefined };

/**
 * The workspace's allowance, per channel: its size (SANDBOX_DISK) and its number of files and folders
 * (SANDBOX_FILES). While a command runs the workspace is watched (by the command runner inside the
 * container, or from here on the one-exec path when the workspace is a host folder) and the command is
 * stopped when it takes the workspace past a limit; no single file may grow past what is left
 * (RLIMIT_FSIZE, so one big write cannot run far ahead of the watch). After each command the workspace
 * is measured (`measure`: on the host, or in the container for a volume); while it is over, a command
 * may remove files but not add any. File-tool writes are checked before they happen.
 */
export class DiskQuota {
  /** Each channel's workspace, as last measured (absent: measure before use). */
  private readonly used = new Map<string, WorkspaceUsage>();

  constructor(
    readonly limits: WorkspaceLimits,
    private readonly measure: MeasureWorkspace,
  ) {}

  get enabled(): boolean {
    return this.limits.bytes > 0 || this.limits.files > 0;
  }

  private get cap(): number {
    return scanCap(this.limits.files);
  }

  /** The limits for the next command, from the workspace as last measured (measured now if unknown). */
  async beforeCommand(key: string): Promise<CommandQuota> {
    if (!this.enabled) return NONE;
    const used = this.used.get(key) ?? (await this.measure(key, { cap: this.cap }));
    return {
      fsize: this.limits.bytes > 0 ? Math.max(0, this.limits.bytes - used.bytes) : undefined,
      quota: { ...this.limits, usedBytes: used.bytes, usedFiles: used.files },
    };
  }

  /**
   * Records the workspace after a command (as the command runner measured it, else measured now) and returns
   * the note for the agent: why the command was stopped, or that the workspace is over a limit.
   */
  async afterCommand(
    key: string,
    measured: WorkspaceUsage | undefined,
    stop: QuotaStop | undefined,
  ): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    const used = measured ?? (await this.measure(key, { cap: this.cap }));
    this.used.set(key, used);
    if (stop) return this.stopNote(stop, used);
    return this.overNote(used);
  }

  private stopNote(stop: QuotaStop, used: WorkspaceUsage): string {
    const atLeast = used.complete ? '' : 'at least ';
    const entries = `${countLabel(used.files)} files and folders`;
    const [limit, holds] =
      stop === 'disk'
        ? [`its ${sizeLabel(this.limits.bytes)} disk limit (SANDBOX_DISK)`, `${sizeLabel(used.bytes)} (${entries})`]
        : [
            `its limit of ${countLabel(this.limits.files)} files and folders (SANDBOX_FILES)`,
            `${entries} (${sizeLabel(used.bytes)})`,
          ];
    return (
      `[ERROR: stopped: the workspace went past ${limit} while this command ran; it holds ${atLeast}${holds}. ` +
      'Remove files to make room (rm works); until then a command that adds to it is stopped]'
    );
  }

  private overNote(used: WorkspaceUsage): string | undefined {
    // Full to the byte (the file-size limit refused every write past it): the next command can write nothing either.
    if (this.limits.bytes > 0 && used.bytes >= this.limits.bytes) {
      const where = used.bytes > this.limits.bytes ? 'over its' : 'all of its';
      return (
        `[ERROR: the workspace holds ${sizeLabel(used.bytes)}, ${where} ${sizeLabel(this.limits.bytes)} limit ` +
        '(SANDBOX_DISK): writing files is refused until some are removed]'
      );
    }
    if (this.limits.files > 0 && used.files > this.limits.files) {
      return (
        `[ERROR: the workspace holds ${countLabel(used.files)} files and folders, over its limit of ` +
        `${countLabel(this.limits.files)} (SANDBOX_FILES): a command that adds more is stopped until some are removed]`
      );
    }
    return undefined;
  }

  /** Throws when writing `bytes` in `files` files from outside (the file tools) would go over the allowance. */
  async beforeWrite(key: string, bytes: number, files = 0): Promise<void> {
    if (!this.enabled) return;
    const used = await this.measure(key, { cap: this.cap });
    this.used.delete(key); // the write changes it: the next command measures again
    if (this.limits.bytes > 0 && used.bytes + bytes > this.limits.bytes) {
      throw new SandboxError(
        `the workspace is full: it holds ${sizeLabel(used.bytes)} of its ${sizeLabel(this.limits.bytes)} limit ` +
          `(SANDBOX_DISK), and this would add ${sizeLabel(bytes)}; remove files first`,
      );
    }
    if (this.limits.files > 0 && used.files + files > this.limits.files) {
      throw new SandboxError(
        `the workspace is full: it holds ${countLabel(used.files)} files and folders of its limit of ` +
          `${countLabel(this.limits.files)} (SANDBOX_FILES), and this would add ${countLabel(files)}; remove files first`,
      );
    }
  }

  /** The workspace was wiped or changed outside: measure again. */
  forget(key: string): void {
    this.used.delete(key);
  }
}
