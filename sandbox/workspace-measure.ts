/**
 * What a channel's workspace holds (bytes and entries), for its allowance (SANDBOX_DISK, SANDBOX_FILES): read on
 * the host when it is a host folder, asked of the container when it is a volume the bridge cannot see.
 */
import type Dockerode from 'dockerode';
import { SandboxError } from '../src/errors.js';
import { HELPER_TIMEOUT_MS } from './container-probe.js';
import { WORKSPACE_MOUNT } from './container-spec.js';
import type { MeasureWorkspace } from './disk-quota.js';
import { execSimple } from './run-exec.js';
import { measureDir } from './workspace-usage.js';

/** A host folder, measured here. */
export function hostFolderMeasure(dirOf: (channelKey: string) => string): MeasureWorkspace {
  return (channelKey, { cap }) => measureDir(dirOf(channelKey), { cap });
}

/**
 * The shell command that measures the workspace in its container, as measureDir does on the host: `du -skx`
 * (KiB allocated, hard links once, other file systems not entered; the folder's own few KiB included), then
 * the entries below it, counted by their NUL terminators (a name may hold a newline), at most `cap` of them.
 */
export function measureCommand(cap: number): string {
  return (
    `cd ${WORKSPACE_MOUNT} || exit 3; du -skx . 2>/dev/null; ` +
    `find . -xdev -print0 2>/dev/null | tr -cd '\\000' | head -c ${Math.floor(cap) + 1} | wc -c`
  );
}

/** Reads what measureCommand printed: undefined when it is not that. */
export function parseMeasure(
  output: string,
  cap: number,
): { bytes: number; files: number; complete: boolean } | undefined {
  const match = /^(\d+)\s+\.\s*\n\s*(\d+)\s*$/.exec(output.trim());
  if (!match) return undefined;
  const files = Math.max(0, Number(match[2]) - 1);
  return { bytes: Number(match[1]) * 1024, files, complete: files < cap };
}

/** Measured in the channel's container, the one `containerOf` makes sure of. */
export function inContainerMeasure(
  containerOf: (channelKey: string) => Promise<Dockerode.Container>,
): MeasureWorkspace {
  return async (channelKey, { cap }) => {
    const container = await containerOf(channelKey);
    const { output, exitCode } = await execSimple(container, ['sh', '-c', measureCommand(cap)], HELPER_TIMEOUT_MS);
    // du and find skip a folder the command made unreadable (and say so in their exit code): the rest still counts.
    const usage = exitCode === null ? undefined : parseMeasure(output, cap);
    if (!usage) {
      throw new SandboxError(
        'the workspace could not be measured in its container (SANDBOX_DISK, SANDBOX_FILES); try again',
      );
    }
    return usage;
  };
}
