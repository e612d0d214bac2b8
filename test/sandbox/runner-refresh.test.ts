import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BAKED_RUNNER_PATH, RUNNER_SOURCE, sourceDigest } from '../../sandbox/runner-source.js';
import { runDockerTests, sandboxImage } from './docker-harness.js';

const SCRIPT = path.resolve('sandbox/build-offline-image.sh');
const docker = (...args: string[]) => spawnSync('docker', args, { encoding: 'utf8' });
const bakedDigest = (image: string) =>
  docker('run', '--rm', '--entrypoint', 'sh', image, '-c', `sha256sum < ${BAKED_RUNNER_PATH}`).stdout.split(' ')[0];
const config = (image: string) =>
  docker('image', 'inspect', '-f', '{{.Config.User}} {{.Config.WorkingDir}} {{json .Config.Cmd}}', image).stdout;

// An image built before the runner changed carries the old one, and the bridge then sends its own runner to every new
// container. `npm run sandbox:build` (which CI runs on every machine) bakes the current one into such an image.
describe.skipIf(!runDockerTests)('npm run sandbox:build on an image whose baked runner is older', () => {
  const tag = `roundtable-sandbox:refresh-${process.pid}`;
  const staging = mkdtempSync(path.join(tmpdir(), 'roundtable-old-runner-'));
  afterAll(() => {
    docker('image', 'rm', '-f', tag);
    rmSync(staging, { recursive: true, force: true });
  });

  it('bakes sandbox/runner.py in place of the old runner, the image otherwise as it was, and then does nothing', () => {
    // The test image: the sandbox image with another runner at the baked path.
    mkdirSync(path.join(staging, path.dirname(BAKED_RUNNER_PATH)), { recursive: true });
    writeFileSync(path.join(staging, BAKED_RUNNER_PATH), '# an older runner\n');
    const container = docker('create', sandboxImage).stdout.trim();
    try {
      expect(docker('cp', path.join(staging, BAKED_RUNNER_PATH), `${container}:${BAKED_RUNNER_PATH}`).status).toBe(0);
      expect(docker('commit', container, tag).status).toBe(0);
    } finally {
      docker('rm', '-f', container);
    }
    expect(bakedDigest(tag)).not.toBe(sourceDigest(RUNNER_SOURCE));

    const build = spawnSync('bash', [SCRIPT], { env: { ...process.env, SANDBOX_IMAGE: tag }, encoding: 'utf8' });
    expect(build.stderr).toContain(`baking sandbox/runner.py into ${tag}`);
    expect(build.status).toBe(0);
    expect(bakedDigest(tag)).toBe(sourceDigest(RUNNER_SOURCE));
    expect(config(tag)).toBe(config(sandboxImage));

    const again = spawnSync('bash', [SCRIPT], { env: { ...process.env, SANDBOX_IMAGE: tag }, encoding: 'utf8' });
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('already exists with this command runner; skipping');
  });
});
