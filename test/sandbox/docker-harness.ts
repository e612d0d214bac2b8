import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Dockerode from 'dockerode';
import { inject } from 'vitest';
import { createDockerSandbox, type DockerSandboxOptions } from '../../sandbox/index.js';
import { readSettings } from '../../src/config/index.js';
import { silentLogger } from '../../src/log.js';
import type { Sandbox } from '../../src/ports.js';

/**
 * Integration tests need a real engine and the sandbox image. The global setup (docker-setup.ts)
 * looked once: outside CI they are skipped, with one line, when either is missing; with CI set
 * they run and fail with the reason.
 */
const plan = inject('docker');
export const dockerUp = plan.engine;
export const runDockerTests = plan.run;
/**
 * Per test: a container is created, probed and used, sometimes twice (fork bomb, OOM); on a
 * loaded machine each step can take seconds, so the bound is generous.
 */
export const DOCKER_TEST_TIMEOUT = 120_000;
/** The sandbox image the tests use. */
export const sandboxImage = plan.image;

/** The reference MCP servers the sandbox image carries when built with SANDBOX_MCP_PACKAGES. */
export const MCP_SERVERS = ['mcp-server-filesystem', 'mcp-server-everything'];

/** Whether the image carries Node and both reference servers (npm run sandbox:build with SANDBOX_MCP_PACKAGES). */
export async function imageHasMcpServers(image: string): Promise<boolean> {
  const docker = new Dockerode();
  const container = await docker.createContainer({
    Image: image,
    Entrypoint: ['sh', '-c', `node --version && command -v ${MCP_SERVERS.join(' ')}`],
    NetworkDisabled: true,
    HostConfig: { NetworkMode: 'none' },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    return StatusCode === 0;
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

/** Fails the calling test file when the Docker tests run without what they need (CI). */
export function requireDocker(): void {
  if (plan.problem) throw new Error(plan.problem);
}

/**
 * A data folder (under `parent`, the system's temporary folder by default) and the sandboxes built on
 * it; `cleanup` removes every container and file they made.
 */
export class SandboxHarness {
  readonly dataDir: string;
  readonly docker = new Dockerode();
  private readonly sandboxes: Sandbox[] = [];

  constructor(parent = tmpdir()) {
    requireDocker();
    this.dataDir = mkdtempSync(path.join(parent, 'roundtable-sandbox-'));
  }

  /** `options` picks the path (command runner or one exec per command) and can swap the runner's source. */
  create(
    env: Record<string, string> = {},
    options: Pick<DockerSandboxOptions, 'commandRunner' | 'runnerSource' | 'probeTimeoutMs' | 'docker'> = {},
  ): Sandbox {
    const settings = readSettings({
      DATA_DIR: this.dataDir,
      SANDBOX_IDLE_MINUTES: '0',
      SANDBOX_IMAGE: plan.image,
      ...env,
    });
    const sandbox = createDockerSandbox({ settings, logger: silentLogger(), docker: this.docker, ...options });
    this.sandboxes.push(sandbox);
    return sandbox;
  }

  /** Containers of this data folder, running or not. */
  async containers(channelKey?: string): Promise<Dockerode.ContainerInfo[]> {
    const label = ['roundtable.project=roundtable', `roundtable.scope=${this.dataDir}`];
    if (channelKey) label.push(`roundtable.channel=${channelKey}`);
    return this.docker.listContainers({ all: true, filters: { label } });
  }

  /** The throw-away containers of start-up checks on this data folder, running or not. */
  async trialContainers(): Promise<Dockerode.ContainerInfo[]> {
    const label = ['roundtable.project=roundtable', `roundtable.scope=${this.dataDir}`, 'roundtable.trial'];
    return this.docker.listContainers({ all: true, filters: { label } });
  }

  async cleanup(): Promise<void> {
    for (const sandbox of this.sandboxes) await sandbox.close().catch(() => undefined);
    if (dockerUp) {
      for (const info of await this.containers()) {
        // A container the sandbox is removing already (a 409) goes away by itself.
        await this.docker
          .getContainer(info.Id)
          .remove({ force: true })
          .catch((error: { statusCode?: number }) => {
            if (error.statusCode !== 404 && error.statusCode !== 409) throw error;
          });
      }
      // Volume workspaces (SANDBOX_WORKSPACES=volume) of this data folder.
      const { Volumes } = await this.docker.listVolumes({ filters: { label: [`roundtable.scope=${this.dataDir}`] } });
      for (const volume of Volumes ?? []) await this.docker.getVolume(volume.Name).remove({ force: true });
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
