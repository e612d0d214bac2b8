import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtBridge, ROOT } from '../helpers/built-bridge.js';
import { IMAGES_RECORD, recordBuiltImage, removeRecordedImages } from '../helpers/built-images.js';
import { runDockerTests, sandboxImage } from '../sandbox/docker-harness.js';

describe('what npm test leaves behind', () => {
  it('builds dist/ for the process tests without leaving a lock file in the temporary folder', () => {
    // Where the build lock used to be made (and stay).
    const hash = createHash('sha256').update(ROOT).digest('hex').slice(0, 12);
    const old = path.join(tmpdir(), `roundtable-build-${hash}.lock`);
    rmSync(old, { force: true });
    builtBridge();
    expect(existsSync(old)).toBe(false);
  }, 600_000);

  it.runIf(runDockerTests)('removes at the end of the run the bridge images the run built', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rt-images-'));
    const record = path.join(dir, 'images');
    const before = process.env[IMAGES_RECORD];
    const tag = `roundtable-bridge:test-leftover-${process.pid}`;
    process.env[IMAGES_RECORD] = record;
    try {
      execFileSync('docker', ['tag', sandboxImage, tag]);
      recordBuiltImage(tag);
      expect(readFileSync(record, 'utf8')).toBe(`${tag}\n`);
      removeRecordedImages(record);
      expect(spawnSync('docker', ['image', 'inspect', tag], { stdio: 'ignore' }).status).not.toBe(0);
      expect(existsSync(record)).toBe(false);
    } finally {
      if (before === undefined) delete process.env[IMAGES_RECORD];
      else process.env[IMAGES_RECORD] = before;
      spawnSync('docker', ['rmi', tag], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
