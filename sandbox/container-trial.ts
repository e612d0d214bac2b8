import { randomUUID } from 'node:crypto';
import { chmod, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Dockerode from 'dockerode';
import type { SandboxError } from '../src/errors.js';
import { createFolders } from '../src/file-access.js';
import { shortHash } from './channel-key.js';
import { containerSpec, LABEL_PROJECT, LABEL_SCOPE, PROJECT, WORKSPACE_MOUNT } from './container-spec.js';
import { Deadline, DeadlinePassed } from './deadline.js';
import {
  type EngineSettings,
  engineAddress,
  engineMessage,
  hasStatus,
  settingRefused,
  workspaceError,
} from './docker-errors.js';
import { execSimple } from './run-exec.js';
import { packTar } from './tar.js';
import { SANDBOX_UID } from './workspace.js';

/** Marks the throw-away containers of a trial, so they are never taken for a channel's. */
export const LABEL_TRIAL = 'roundtable.trial';
/** The workspace folder a trial mounts, under DATA_DIR/workspaces (no channel's slug starts with a dot). */
export const TRIAL_FOLDER = '.roundtable-check';

/** How the throw-away container did. */
export type TrialOutcome =
  | { readonly kind: 'passed'; readonly folder: string }
  /** It ran, but the marker the bridge wrote was not in its /workspace: the engine sees another folder. */
  | { readonly kind: 'hidden'; readonly folder: string; readonly seen: string }
  /** The engine refused to create or start it; the error names the setting. */
  | { readonly kind: 'refused'; readonly error: SandboxError }
  | { readonly kind: 'timed out' }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * Starts one throw-away container exactly as a channel's would be (image, network, limits,
 * hardening, the workspace bind mount), with a marker file the bridge wrote into its workspace
 * folder, and asks it to read the marker back. So the engine itself says whether it accepts the
 * settings and sees DATA_DIR where the bridge does: it resolves bind mounts on its own host, so
 * a bridge in a container with its data folder elsewhere passes every other check yet hands the
 * agents an empty workspace. Bounded by `timeoutMs` (and `signal`); the container and the marker
 * are removed whatever happens.
 */
export async function tryContainer(input: {
  readonly docker: Dockerode;
  readonly settings: EngineSettings & { readonly SANDBOX_WORKSPACES?: 'bind' | 'volume' | undefined };
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
}): Promise<TrialOutcome> {
  const { docker, settings, timeoutMs } = input;
  if (settings.SANDBOX_WORKSPACES === 'volume') return tryVolumeContainer(input);
  const folder = path.join(settings.DATA_DIR, 'workspaces', TRIAL_FOLDER);
  const marker = `check-${randomUUID().slice(0, 8)}`;
  const token = randomUUID();
  const deadline = new Deadline(timeoutMs, input.signal);
  let creating: Promise<Dockerode.Container> | undefined;
  try {
    try {
      // Not Node's recursive mkdir: under /proc it retries for ever at full CPU (see createFolders).
      createFolders(folder);
      // Readable by the container's unprivileged user whatever the umask.
      await chmod(folder, 0o755);
      await writeFile(path.join(folder, marker), token, { mode: 0o644 });
    } catch (error) {
      return { kind: 'failed', error: workspaceError(error, folder, undefined) };
    }
    const spec = containerSpec({
      name: `roundtable-${shortHash(settings.DATA_DIR)}_${marker}`,
      channelKey: '',
      scope: settings.DATA_DIR,
      workspaceDir: folder,
      settings,
    });
    creating = docker.createContainer({
      ...spec,
      // Ends by itself, and the engine then removes it, should this process lose track of it.
      Cmd: ['sleep', String(Math.ceil(timeoutMs / 1000) + 30)],
      Labels: { [LABEL_PROJECT]: PROJECT, [LABEL_SCOPE]: settings.DATA_DIR, [LABEL_TRIAL]: '1' },
      HostConfig: { ...spec.HostConfig, AutoRemove: true },
    });
    const container = await deadline.race(creating);
    await deadline.race(container.start());
    const read = await deadline.race(
      execSimple(container, ['cat', `${WORKSPACE_MOUNT}/${marker}`], deadline.remaining()),
    );
    if (read.exitCode === null) throw new DeadlinePassed();
    if (read.exitCode === 0 && read.output === token) return { kind: 'passed', folder };
    return { kind: 'hidden', folder, seen: read.output.trim() || `exit code ${read.exitCode}` };
  } catch (error) {
    if (error instanceof DeadlinePassed) return { kind: 'timed out' };
    const refused = settingRefused(error, settings);
    return refused ? { kind: 'refused', error: refused } : { kind: 'failed', error };
  } finally {
    deadline.clear();
    await Promise.all([discard(creating), removeMarker(folder, marker)]);
  }
}

/**
 * The same trial for volume workspaces: a throw-away volume, the marker put in through the archive API before
 * the container starts (as a new workspace's template is), and read back by the container.
 */
async function tryVolumeContainer(input: Parameters<typeof tryContainer>[0]): Promise<TrialOutcome> {
  const { docker, settings, timeoutMs } = input;
  const marker = `check-${randomUUID().slice(0, 8)}`;
  const token = randomUUID();
  const deadline = new Deadline(timeoutMs, input.signal);
  const where = `a throw-away volume of ${engineAddress(docker)}`;
  let creating: Promise<Dockerode.Container> | undefined;
  try {
    const spec = containerSpec({
      name: `roundtable-${shortHash(settings.DATA_DIR)}_${marker}`,
      channelKey: '',
      scope: settings.DATA_DIR,
      workspaceVolume: '',
      settings,
    });
    creating = docker.createContainer({
      ...spec,
      Cmd: ['sleep', String(Math.ceil(timeoutMs / 1000) + 30)],
      Labels: { [LABEL_PROJECT]: PROJECT, [LABEL_SCOPE]: settings.DATA_DIR, [LABEL_TRIAL]: '1' },
      // An anonymous volume (no source): removed with the container.
      HostConfig: {
        ...spec.HostConfig,
        Mounts: [{ Type: 'volume', Source: '', Target: WORKSPACE_MOUNT }],
        AutoRemove: true,
      },
    });
    const container = await deadline.race(creating);
    const file = { type: 'file', mode: 0o644, uid: SANDBOX_UID, gid: SANDBOX_UID } as const;
    await deadline.race(
      container.putArchive(packTar([{ ...file, name: marker, content: Buffer.from(token) }]), {
        path: WORKSPACE_MOUNT,
      }),
    );
    await deadline.race(container.start());
    const read = await deadline.race(
      execSimple(container, ['cat', `${WORKSPACE_MOUNT}/${marker}`], deadline.remaining()),
    );
    if (read.exitCode === null) throw new DeadlinePassed();
    if (read.exitCode === 0 && read.output === token) return { kind: 'passed', folder: where };
    return { kind: 'hidden', folder: where, seen: read.output.trim() || `exit code ${read.exitCode}` };
  } catch (error) {
    if (error instanceof DeadlinePassed) return { kind: 'timed out' };
    const refused = settingRefused(error, settings);
    return refused ? { kind: 'refused', error: refused } : { kind: 'failed', error };
  } finally {
    deadline.clear();
    await discard(creating);
  }
}

/**
 * Removes the trial's container, also one whose creation outlived the deadline (the engine
 * finishes a create it has begun); bounded, as the engine may be what is slow.
 */
async function discard(creating: Promise<Dockerode.Container> | undefined): Promise<void> {
  if (!creating) return;
  const removal = creating.then(
    (container) =>
      container.remove({ force: true, v: true }).catch((error: unknown) => {
        // 404: gone already (AutoRemove); 409: its removal is under way.
        if (!hasStatus(error, 404, 409)) throw new Error(engineMessage(error));
      }),
    () => undefined,
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    removal.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, DISCARD_BOUND_MS);
    }),
  ]);
  clearTimeout(timer);
}

/** How long cleaning up may add to a trial; past it the container ends (and goes) by itself. */
const DISCARD_BOUND_MS = 10_000;

async function removeMarker(folder: string, marker: string): Promise<void> {
  await rm(path.join(folder, marker), { force: true }).catch(() => undefined);
  // Another trial (a --check beside the running bridge) may still use the folder: then it stays.
  await rmdir(folder).catch(() => undefined);
}
