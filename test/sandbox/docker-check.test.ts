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

  it('names a missing image, a missing network and more CPUs than the engine has', async () => {
    const results = await checkDocker(
      readSettings({
        SANDBOX_IMAGE: 'roundtable-never-built:none',
        SANDBOX_NETWORK: 'roundtable-no-such-net',
        SANDBOX_CPUS: '1000',
      }),
      docker,
    );
    expect(results.filter((r) => !r.ok).map((r) => `${r.item}: ${r.detail}`)).toEqual([
      'sandbox image roundtable-never-built:none: is missing: run npm run sandbox:build (or docker build -t roundtable-never-built:none sandbox/)',
      'sandbox network roundtable-no-such-net: the engine has no network of that name (SANDBOX_NETWORK; docker network create roundtable-no-such-net)',
      expect.stringMatching(/^sandbox limits: SANDBOX_CPUS=1000 but the engine has \d+ CPUs?$/),
    ]);
  });
});
