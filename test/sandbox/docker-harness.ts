import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Dockerode from 'dockerode';
import { createDockerSandbox, type DockerSandboxOptions } from '../../sandbox/index.js';
import { readSettings } from '../../src/config/index.js';
import { silentLogger } from '../../src/log.js';
import type { Sandbox } from '../../src/ports.js';

/**
 * Integration tests need a real engine. Outside CI they are skipped (with a note) when
 * `docker info` fails; under CI=true they always run, so a missing engine fails the build.
 */
export const dockerUp = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 20_000 }).status === 0;
export const runDockerTests = dockerUp || Boolean(process.env.CI);
if (!runDockerTests) {
  console.warn(
    'Docker sandbox integration tests skipped: `docker info` failed (start dockerd; CI=true makes them required)',
  );
}

/** A data folder and the sandboxes built on it; `cleanup` removes every container and file they made. */
export class SandboxHarness {
  readonly dataDir = mkdtempSync(path.join(tmpdir(), 'roundtable-sandbox-'));
  readonly docker = new Dockerode();
  private readonly sandboxes: Sandbox[] = [];

  /** `options` picks the path (command runner or one exec per command) and can swap the runner's source. */
  create(
    env: Record<string, string> = {},
    options: Pick<DockerSandboxOptions, 'commandRunner' | 'runnerSource'> = {},
  ): Sandbox {
    const settings = readSettings({ DATA_DIR: this.dataDir, SANDBOX_IDLE_MINUTES: '0', ...env });
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

  async cleanup(): Promise<void> {
    for (const sandbox of this.sandboxes) await sandbox.close().catch(() => undefined);
    if (dockerUp) {
      for (const info of await this.containers()) await this.docker.getContainer(info.Id).remove({ force: true });
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
