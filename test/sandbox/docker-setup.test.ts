import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isCi, planDockerTests } from './docker-setup.js';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const image = 'roundtable-sandbox:latest';

describe('whether the Docker tests run', () => {
  it('reads CI=false, 0, no and empty as not CI', () => {
    expect(['true', '1', 'yes', 'TRUE', 'woodpecker'].map(isCi)).toEqual([true, true, true, true, true]);
    expect(['false', '0', 'no', 'off', '', ' ', undefined].map(isCi)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('runs them when the engine answers and the image exists', () => {
    expect(planDockerTests({ ci: false, image, imagePresent: true })).toEqual({ run: true, image, engine: true });
  });

  it('skips them outside CI with one line naming what is missing', () => {
    expect(planDockerTests({ ci: false, image, imagePresent: false })).toEqual({
      run: false,
      image,
      engine: true,
      note: `Docker sandbox tests skipped: the sandbox image ${image} is missing: build it with npm run sandbox:build (CI=true makes them required)`,
    });
    expect(planDockerTests({ ci: false, image, engineError: 'connect ENOENT', imagePresent: false }).note).toBe(
      'Docker sandbox tests skipped: no Docker engine answered (connect ENOENT): start dockerd or set DOCKER_HOST (CI=true makes them required)',
    );
  });

  it('runs them under CI even without an engine or image, with the reason to fail on', () => {
    expect(planDockerTests({ ci: true, image, imagePresent: false })).toEqual({
      run: true,
      image,
      engine: true,
      problem: `CI is set, so the Docker tests must run, but the sandbox image ${image} is missing: build it with npm run sandbox:build`,
    });
  });

  // The real thing, in a child vitest: an image that does not exist stands for "not built yet".
  const vitest = (ci: string) =>
    exec(path.join(ROOT, 'node_modules/.bin/vitest'), ['run', 'test/sandbox/terminal-room.test.ts'], {
      cwd: ROOT,
      env: { ...process.env, CI: ci, SANDBOX_IMAGE: 'roundtable-never-built:none', NO_COLOR: '1' },
      timeout: 150_000,
    }).then(
      (done) => ({ code: 0, out: done.stdout + done.stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        out: error.stdout + error.stderr,
      }),
    );

  it('passes npm test with CI=false when the image is not built, saying so once', async () => {
    const { code, out } = await vitest('false');
    expect(code).toBe(0);
    expect(out.match(/Docker sandbox tests skipped: .*roundtable-never-built:none/g)).toHaveLength(1);
  }, 180_000);

  it('fails with CI=true when the image is not built, naming the image', async () => {
    const { code, out } = await vitest('true');
    expect(code).toBe(1);
    expect(out).toMatch(/CI is set, so the Docker tests must run, but .*roundtable-never-built:none/);
  }, 180_000);
});
