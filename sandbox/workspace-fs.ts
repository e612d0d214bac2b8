import { statfs } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceLimits } from './workspace-usage.js';

/** statfs(2) magic numbers of the file systems the sandbox docs speak of. */
const FILE_SYSTEMS: Record<number, string> = {
  61267: 'ext4', // ext2, ext3 and ext4 share it
  1481003842: 'xfs',
  16914836: 'tmpfs',
  2240043254: 'ramfs',
  2035054128: 'overlay',
  2435016766: 'btrfs',
  801189825: 'zfs',
  26985: 'nfs',
  1702057286: 'fuse',
};

/** File systems that keep files in memory: what a container writes there counts against its memory limit. */
export const IN_MEMORY = new Set(['tmpfs', 'ramfs']);

/** The file system holding `dir` (or its nearest existing parent): a name, or the hex magic number. */
export async function fileSystemOf(dir: string): Promise<string> {
  let current = path.resolve(dir);
  for (;;) {
    try {
      const { type } = await statfs(current);
      return FILE_SYSTEMS[type] ?? `0x${type.toString(16)}`;
    } catch (error) {
      const parent = path.dirname(current);
      if (parent === current) throw error;
      current = parent;
    }
  }
}

export interface EffectiveLimits {
  readonly limits: WorkspaceLimits;
  /** Set when the file system lowered SANDBOX_DISK: why, for the log. */
  readonly lowered?: string;
}

/**
 * The workspace limits on a given file system. In memory (tmpfs, ramfs) a container's files count against
 * its memory limit, and a workspace that fills it leaves no memory for any command, `rm` included: there
 * the allowance is at most half of SANDBOX_MEMORY.
 */
export function effectiveLimits(configured: WorkspaceLimits, memoryBytes: number, fileSystem: string): EffectiveLimits {
  if (!IN_MEMORY.has(fileSystem)) return { limits: configured };
  const ceiling = Math.floor(memoryBytes / 2);
  if (configured.bytes > 0 && configured.bytes <= ceiling) return { limits: configured };
  return {
    limits: { ...configured, bytes: ceiling },
    lowered: `the workspaces are on ${fileSystem}, in memory, where files count against each container's memory`,
  };
}
