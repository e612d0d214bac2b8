/**
 * Where a channel's workspace lives (SANDBOX_WORKSPACES): a folder under DATA_DIR bind-mounted into the container
 * (`bind`, the default), or a named Docker volume the engine keeps (`volume`, for an engine on another machine,
 * which cannot mount the bridge's folders). Either way it outlives the container and is mounted at /workspace.
 */
import path from 'node:path';
import type Dockerode from 'dockerode';
import { channelSlug, containerName } from './channel-key.js';
import {
  LABEL_CHANNEL,
  LABEL_PROJECT,
  LABEL_SCOPE,
  PROJECT,
  WORKSPACE_MOUNT,
  type WorkspaceMount,
} from './container-spec.js';
import { hasStatus, workspaceError } from './docker-errors.js';
import { packTar } from './tar.js';
import { templateEntries } from './template-archive.js';
import { prepareWorkspace, SANDBOX_UID, wipeWorkspace } from './workspace.js';

export interface WorkspaceStorage {
  readonly kind: 'bind' | 'volume';
  /** Makes the workspace when it is missing, before its container is created; true when it is new. */
  prepare(channelKey: string): Promise<boolean>;
  mount(channelKey: string): WorkspaceMount;
  /** Gives a new workspace its template, once its container exists (created, not yet started). */
  seed(channelKey: string, container: Dockerode.Container): Promise<void>;
  /** Removes the workspace (`/reset workspace`); its container must be gone already. */
  wipe(channelKey: string): Promise<void>;
}

/** `DATA_DIR/workspaces/<slug>/`, seeded by copying the template folder on the host. */
export class BindWorkspaces implements WorkspaceStorage {
  readonly kind = 'bind';

  constructor(
    private readonly dataDir: string,
    private readonly templateDir: string | undefined,
  ) {}

  dir(channelKey: string): string {
    return path.join(this.dataDir, 'workspaces', channelSlug(channelKey));
  }

  async prepare(channelKey: string): Promise<boolean> {
    const dir = this.dir(channelKey);
    return prepareWorkspace(dir, this.templateDir).catch((error: unknown) => {
      throw workspaceError(error, dir, this.templateDir);
    });
  }

  mount(channelKey: string): WorkspaceMount {
    return { workspaceDir: this.dir(channelKey) };
  }

  async seed(): Promise<void> {
    // prepare() copied the template already.
  }

  async wipe(channelKey: string): Promise<void> {
    await wipeWorkspace(this.dir(channelKey));
  }
}

/**
 * One named volume per channel, labelled like the containers (project, channel, scope). A new volume gets the
 * template through the archive API before its first container starts, owned by the sandbox user.
 */
export class VolumeWorkspaces implements WorkspaceStorage {
  readonly kind = 'volume';
  /** Volumes this process made and has not seeded yet. */
  private readonly fresh = new Set<string>();

  constructor(
    private readonly docker: Dockerode,
    private readonly scope: string,
    private readonly templateDir: string | undefined,
  ) {}

  /** The same scheme as the container's name: a volume and a container never share a namespace. */
  volumeName(channelKey: string): string {
    return containerName(this.scope, channelKey);
  }

  async prepare(channelKey: string): Promise<boolean> {
    const name = this.volumeName(channelKey);
    try {
      await this.docker.getVolume(name).inspect();
      return false;
    } catch (error) {
      if (!hasStatus(error, 404)) throw error;
    }
    await this.docker.createVolume({
      Name: name,
      Labels: { [LABEL_PROJECT]: PROJECT, [LABEL_CHANNEL]: channelKey, [LABEL_SCOPE]: this.scope },
    });
    this.fresh.add(name);
    return true;
  }

  mount(channelKey: string): WorkspaceMount {
    return { workspaceVolume: this.volumeName(channelKey) };
  }

  async seed(channelKey: string, container: Dockerode.Container): Promise<void> {
    const name = this.volumeName(channelKey);
    if (!this.fresh.has(name)) return;
    let entries: Awaited<ReturnType<typeof templateEntries>>;
    try {
      entries = this.templateDir ? await templateEntries(this.templateDir) : [];
    } catch (error) {
      throw workspaceError(error, `volume ${name}`, this.templateDir);
    }
    // The volume's root too: an image whose /workspace is root's would leave it unwritable.
    const root = { name: '.', type: 'directory', mode: 0o755, uid: SANDBOX_UID, gid: SANDBOX_UID } as const;
    await container.putArchive(packTar([root, ...entries]), { path: WORKSPACE_MOUNT });
    this.fresh.delete(name);
  }

  async wipe(channelKey: string): Promise<void> {
    const name = this.volumeName(channelKey);
    this.fresh.delete(name);
    try {
      await this.docker.getVolume(name).remove();
    } catch (error) {
      if (!hasStatus(error, 404)) throw error;
    }
  }
}
