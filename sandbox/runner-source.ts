import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { packagePath } from '../src/paths.js';

/** Where the project's images carry the runner (Dockerfile and the offline build copy it there). */
export const BAKED_RUNNER_PATH = '/usr/local/lib/roundtable/runner.py';

/** The runner this bridge speaks to, read once from sandbox/runner.py. */
export const RUNNER_SOURCE = readFileSync(packagePath('sandbox', 'runner.py'), 'utf8');

export function sourceDigest(source: string): string {
  return createHash('sha256').update(source).digest('hex');
}

/**
 * Reads exactly argv[1] bytes of source from stdin, then runs it; the rest of stdin is the
 * runner's request stream. Passing the source this way (not as an argument) keeps `ps` readable.
 */
const BOOTSTRAP = [
  'import os, sys',
  'n = int(sys.argv[1]); b = b""',
  'while len(b) < n: b += os.read(0, n - len(b)) or sys.exit(3)',
  'exec(compile(b, "roundtable-runner", "exec"))',
].join('\n');

export interface RunnerLaunch {
  readonly cmd: string[];
  /** Bytes to write on the runner's stdin before any request. */
  readonly preamble: Buffer | undefined;
}

/**
 * How to start the runner: the image's baked copy when it is byte-for-byte this bridge's runner
 * (the probe reports its digest); otherwise the source is injected through stdin, which works
 * with any image that has python3 (an older one, someone else's). `-I -S`: no environment,
 * no site packages, which also starts faster.
 */
export function runnerLaunch(source: string, bakedDigest: string | undefined): RunnerLaunch {
  if (bakedDigest === sourceDigest(source)) {
    return { cmd: ['python3', '-I', '-S', BAKED_RUNNER_PATH], preamble: undefined };
  }
  const bytes = Buffer.from(source, 'utf8');
  return { cmd: ['python3', '-I', '-S', '-c', BOOTSTRAP, String(bytes.length)], preamble: bytes };
}
