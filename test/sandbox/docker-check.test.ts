import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { tryContainer } from '../../sandbox/container-trial.js';
import { checkDocker } from '../../sandbox/index.js';
import { readSettings } from '../../src/config/index.js';
import { DOCKER_TEST_TIMEOUT, requireDocker, runDockerTests, sandboxImage } from './docker-harness.js';

describe('--check: Docker without an engine', () => {
  it('is one ✗ line saying how to reach the engine', async () => {
    const docker = new Dockerode({ socketPath: '/nonexistent/docker.sock' });
    expect(await checkDocker(readSettings({}), docker)).toEqual([
      {
        ok: false,
        item: 'Docker engine',
        detail:
          'Docker is not reachable at /nonexistent/docker.sock: start the Docker engine (dockerd) or set DOCKER_HOST',
      },
    ]);
  });
});

describe('--check: the throw-away container with DATA_DIR where no folder can be made', () => {
  it('fails at once, naming the workspace folder, instead of spinning on /proc', async () => {
    // The engine is never reached: preparing the workspace folder fails first.
    const docker = new Dockerode({ socketPath: '/nonexistent/docker.sock' });
    const settings = readSettings({ DATA_DIR: '/proc/roundtable-check-data' });
    const outcome = await Promise.race([
      tryContainer({ docker, settings, timeoutMs: 5000 }),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000).unref()),
    ]);
    expect(outcome).not.toBe('hung');
    expect(outcome).toMatchObject({ kind: 'failed' });
    const error = (outcome as { error: Error }).error;
    expect(error.message).toContain('/proc/roundtable-check-data/workspaces/.roundtable-check');
  }, 30_000);
});

describe.runIf(runDockerTests)('--check: Docker (real engine)', { timeout: DOCKER_TEST_TIMEOUT }, () => {
  requireDocker();
  const docker = new Dockerode();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rt-docker-check-'));
  const settings = (env: Record<string, string> = {}) =>
    readSettings({ SANDBOX_IMAGE: sandboxImage, DATA_DIR: dataDir, ...env });
  /** The throw-away containers of checks on this data folder, in any state (`docker ps -a` by label). */
  const trials = () =>
    docker.listContainers({
      all: true,
      filters: { label: ['roundtable.project=roundtable', `roundtable.scope=${dataDir}`, 'roundtable.trial'] },
    });
  afterAll(async () => {
    for (const info of await trials()) await docker.getContainer(info.Id).remove({ force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds the engine, the image and limits that fit, and a container that sees the workspace', async () => {
    const results = await checkDocker(settings(), docker);
    expect(results.map((r) => [r.ok, r.item])).toEqual([
      [true, 'Docker engine'],
      [true, `sandbox image ${sandboxImage}`],
      [true, 'sandbox limits'],
      [true, 'sandbox container'],
    ]);
    expect(results.at(-1)?.detail).toBe(
      `a throw-away one started with these settings and read a file the bridge wrote in ${dataDir}/workspaces`,
    );
    // Neither the container nor the marker file is left behind.
    expect(await trials()).toEqual([]);
    expect(readdirSync(path.join(dataDir, 'workspaces'))).toEqual([]);
  });

  it('names each setting the engine refuses, what Docker said and the fix', async () => {
    const results = await checkDocker(
      settings({
        SANDBOX_IMAGE: 'roundtable-never-built:none',
        SANDBOX_NETWORK: 'roundtable-no-such-net',
        SANDBOX_CPUS: '1000',
      }),
      docker,
    );
    const { NCPU: cpus } = (await docker.info()) as { NCPU: number };
    expect(results.filter((r) => !r.ok).map((r) => `${r.item}: ${r.detail}`)).toEqual([
      'sandbox image roundtable-never-built:none: SANDBOX_IMAGE=roundtable-never-built:none: Docker says No such image: ' +
        'roundtable-never-built:none (build it with npm run sandbox:build, or correct SANDBOX_IMAGE)',
      'sandbox network roundtable-no-such-net: SANDBOX_NETWORK=roundtable-no-such-net: Docker says network ' +
        'roundtable-no-such-net not found (docker network ls lists the networks; none, the default, means no network)',
      `sandbox limits: SANDBOX_CPUS=1000: the engine has ${cpus} CPU${cpus === 1 ? '' : 's'} (set SANDBOX_CPUS to ${cpus} or less)`,
    ]);
  });

  it('names SANDBOX_NETWORK when the throw-away container finds no container to share a network with', async () => {
    const results = await checkDocker(settings({ SANDBOX_NETWORK: 'container:roundtable-no-such-container' }), docker);
    expect(results.filter((r) => !r.ok).map((r) => `${r.item}: ${r.detail}`)).toEqual([
      'sandbox container: SANDBOX_NETWORK=container:roundtable-no-such-container: Docker says No such container: ' +
        'roundtable-no-such-container (docker ps lists the containers; none, the default, means no network)',
    ]);
    expect(await trials()).toEqual([]);
  });

  it('gives the throw-away container up at its time limit, and removes it', async () => {
    // From "nothing answered yet" to "almost done": whichever step the limit cuts, nothing stays.
    for (const timeoutMs of [1, 20, 60, 120, 250]) {
      const trial = await tryContainer({ docker, settings: settings(), timeoutMs });
      expect(['timed out', 'passed']).toContain(trial.kind);
      await vi.waitFor(async () => expect(await trials()).toEqual([]), { timeout: 30_000, interval: 100 });
    }
    const late = await checkDocker(settings(), docker, { timeoutMs: 1 });
    expect(late.filter((r) => !r.ok).map((r) => `${r.item}: ${r.detail}`)).toEqual([
      'Docker engine: no answer within 1 ms (the machine or the Docker engine is overloaded); run the check again',
    ]);
  });
});
