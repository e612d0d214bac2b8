import type { ContainerCreateOptions } from 'dockerode';
import type { Settings } from '../src/config/index.js';
import { MIN_MEMORY_BYTES, sizeInBytes } from '../src/config/sandbox-values.js';
import { ConfigError } from '../src/errors.js';

/** Labels every sandbox container carries, so a restarted bridge finds (adopts) its containers. */
export const LABEL_PROJECT = 'roundtable.project';
export const LABEL_CHANNEL = 'roundtable.channel';
export const LABEL_SCOPE = 'roundtable.scope';
export const PROJECT = 'roundtable';

/** Where the channel's workspace is mounted; also the working directory of every command. */
export const WORKSPACE_MOUNT = '/workspace';

/** Parses a Docker-style size (`512m`, `1g`, `1.5g`, `268435456`) into bytes; names the variable when invalid. */
export function parseMemory(value: string, variable = 'SANDBOX_MEMORY'): number {
  const bytes = sizeInBytes(value);
  // Docker refuses limits under 6 MB; saying so here beats a cryptic engine error later.
  if (bytes === undefined || bytes < MIN_MEMORY_BYTES) {
    throw new ConfigError(
      'environment',
      variable,
      `expected a size of at least 6m such as 512m or 1g (got "${value}")`,
    );
  }
  return bytes;
}

/** What is mounted at /workspace: a host folder (bind mount) or a named Docker volume. */
export type WorkspaceMount = { readonly workspaceDir: string } | { readonly workspaceVolume: string };

export type ContainerSpecInput = WorkspaceMount & {
  readonly name: string;
  readonly channelKey: string;
  readonly scope: string;
  readonly settings: Pick<
    Settings,
    'SANDBOX_IMAGE' | 'SANDBOX_MEMORY' | 'SANDBOX_CPUS' | 'SANDBOX_PIDS' | 'SANDBOX_NETWORK'
  >;
};

/**
 * The hardened container for one channel (issue 3): no network by default, every capability
 * dropped, no-new-privileges, read-only root with a tmpfs /tmp, memory/CPU/pids limits.
 * The user is the image's own (`sandbox`, uid 1000, in both of the project's images).
 */
export function containerSpec(input: ContainerSpecInput): ContainerCreateOptions {
  const memory = parseMemory(input.settings.SANDBOX_MEMORY);
  return {
    name: input.name,
    Image: input.settings.SANDBOX_IMAGE,
    // `sleep infinity` keeps the container up between commands; Init (tini) reaps orphans of killed commands.
    Cmd: ['sleep', 'infinity'],
    WorkingDir: WORKSPACE_MOUNT,
    Env: ['HOME=/tmp', 'LANG=C.UTF-8', 'PYTHONDONTWRITEBYTECODE=1'],
    Labels: {
      [LABEL_PROJECT]: PROJECT,
      [LABEL_CHANNEL]: input.channelKey,
      [LABEL_SCOPE]: input.scope,
    },
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    OpenStdin: false,
    NetworkDisabled: input.settings.SANDBOX_NETWORK === 'none',
    HostConfig: {
      Init: true,
      NetworkMode: input.settings.SANDBOX_NETWORK,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=64m,mode=1777' },
      ...('workspaceVolume' in input
        ? { Mounts: [{ Type: 'volume' as const, Source: input.workspaceVolume, Target: WORKSPACE_MOUNT }] }
        : { Binds: [`${input.workspaceDir}:${WORKSPACE_MOUNT}:rw`] }),
      Memory: memory,
      // Equal to Memory: no swap, so a memory hog is stopped at the limit instead of thrashing.
      MemorySwap: memory,
      NanoCpus: Math.round(input.settings.SANDBOX_CPUS * 1e9),
      PidsLimit: input.settings.SANDBOX_PIDS,
      RestartPolicy: { Name: 'no' },
    },
  };
}
