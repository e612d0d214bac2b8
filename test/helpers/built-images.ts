/**
 * The bridge images test files build (test/helpers/bridge-image.ts) are recorded in one file per run, named by
 * ROUNDTABLE_TEST_IMAGES (set by the global setup, so every test process inherits it), and removed when the run
 * ends: `npm test` leaves no `roundtable-bridge:test-*` image behind. Images found already there are not the run's.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';

export const IMAGES_RECORD = 'ROUNDTABLE_TEST_IMAGES';

/** Notes an image this run built, for removal at its end (nothing when no run records). */
export function recordBuiltImage(tag: string): void {
  const file = process.env[IMAGES_RECORD];
  if (file) appendFileSync(file, `${tag}\n`);
}

/** Removes every image in the record, newest first (a final image before the base it was built on), then the record. */
export function removeRecordedImages(file: string): void {
  if (!existsSync(file)) return;
  const tags = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))].reverse();
  for (const tag of tags) {
    // An image another run's container still uses is kept (docker refuses): that run removes its own.
    spawnSync('docker', ['rmi', tag], { stdio: 'ignore', timeout: 60_000 });
  }
  rmSync(file, { force: true });
}
