import Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
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

describe.runIf(runDockerTests)('--check: Docker (real engine)', { timeout: DOCKER_TEST_TIMEOUT }, () => {
  requireDocker();
  const docker = new Dockerode();

  it('finds the engine, the image and limits that fit', async () => {
    const results = await checkDocker(readSettings({ SANDBOX_IMAGE: sandboxImage }), docker);
    expect(results.map((r) => [r.ok, r.item])).toEqual([
      [true, 'Docker engine'],
      [true, `sandbox image ${sandboxImage}`],
      [true, 'sandbox limits'],
    ]);
  });

  it('names each setting the engine refuses, what Docker said and the fix', async () => {
    const results = await checkDocker(
      readSettings({
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
});
