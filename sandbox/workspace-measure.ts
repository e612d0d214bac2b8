/**
 * How big a channel's workspace is, for its disk allowance (SANDBOX_DISK): read on the host when it is a host
 * folder, asked of the container when it is a volume the bridge cannot see.
 */
import type Dockerode from 'dockerode';
import { SandboxError } from '../src/errors.js';
import { HELPER_TIMEOUT_MS } from './container-probe.js';
import { WORKSPACE_MOUNT } from './container-spec.js';
import { type MeasureWorkspace, measureDir } from './disk-quota.js';
import { execSimple } from './run-exec.js';

/** A host folder, measured here. */
export function hostFolderMeasure(dirOf: (channelKey: string) => string): MeasureWorkspace {
  return (channelKey) => measureDir(dirOf(channelKey));
}

/** Measured in the channel's container (`du -skx /workspace`), the one `containerOf` makes sure of. */
export function inContainerMeasure(
  containerOf: (channelKey: string) => Promise<Dockerode.Container>,
): MeasureWorkspace {
  return async (channelKey) => {
    const container = await containerOf(channelKey);
    const { output, exitCode } = await execSimple(
      container,
      ['sh', '-c', `du -skx ${WORKSPACE_MOUNT} 2>/dev/null`],
      HELPER_TIMEOUT_MS,
    );
    const kib = /^(\d+)\s/.exec(output)?.[1];
    // du says 1 when it could not read a folder the command made unreadable: its total is still right.
    if (kib === undefined || exitCode === null) {
      throw new SandboxError('the workspace could not be measured in its container (SANDBOX_DISK); try again');
    }
    return Number(kib) * 1024;
  };
}
