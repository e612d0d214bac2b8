/**
 * Vitest global setup: finds out once, before any test file runs, whether the Docker sandbox
 * integration tests can run (an engine answers, the sandbox image exists). Outside CI they are
 * skipped with one line saying why; with CI set they run, and a missing engine or image fails them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Dockerode from 'dockerode';
import type { TestProject } from 'vitest/node';
import { IMAGES_RECORD, removeRecordedImages } from '../helpers/built-images.js';

export interface DockerTestPlan {
  /** Whether the Docker test suites run at all. */
  readonly run: boolean;
  /** When they run but cannot pass: why (CI without an engine or image). */
  readonly problem?: string;
  /** The sandbox image the tests use (SANDBOX_IMAGE, or the default). */
  readonly image: string;
  /** Whether an engine answered (the harness cleans up containers only then). */
  readonly engine: boolean;
}

declare module 'vitest' {
  export interface ProvidedContext {
    docker: DockerTestPlan;
  }
}

const DEFAULT_IMAGE = 'roundtable-sandbox:latest';

/** `CI=true`/`1`/`yes` is CI; `CI=false`, `0`, `no` or empty is not (CI services set `CI=true`). */
export function isCi(value: string | undefined): boolean {
  const v = (value ?? '').trim().toLowerCase();
  return v !== '' && !['false', '0', 'no', 'off'].includes(v);
}

/** What to do given what was found; `engineError` is set when no engine answered. */
export function planDockerTests(found: {
  ci: boolean;
  image: string;
  engineError?: string | undefined;
  imagePresent: boolean;
}): DockerTestPlan & { note?: string } {
  const { ci, image } = found;
  const engine = found.engineError === undefined;
  const problem = !engine
    ? `no Docker engine answered (${found.engineError}): start dockerd or set DOCKER_HOST`
    : found.imagePresent
      ? undefined
      : `the sandbox image ${image} is missing: build it with npm run sandbox:build`;
  if (!problem) return { run: true, image, engine };
  if (ci) return { run: true, image, engine, problem: `CI is set, so the Docker tests must run, but ${problem}` };
  return { run: false, image, engine, note: `Docker sandbox tests skipped: ${problem} (CI=true makes them required)` };
}

async function probe(image: string): Promise<{ engineError?: string; imagePresent: boolean }> {
  const docker = new Dockerode();
  // Generous: on a busy machine the engine can take seconds to answer.
  const within = <T>(promise: Promise<T>) =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 30 s')), 30_000).unref()),
    ]);
  try {
    await within(docker.ping());
  } catch (error) {
    return { engineError: (error as Error).message.split('\n')[0] ?? 'unknown error', imagePresent: false };
  }
  try {
    await within(docker.getImage(image).inspect());
    return { imagePresent: true };
  } catch {
    return { imagePresent: false };
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const image = process.env.SANDBOX_IMAGE?.trim() || DEFAULT_IMAGE;
  const { note, ...plan } = planDockerTests({ ci: isCi(process.env.CI), image, ...(await probe(image)) });
  if (note) console.warn(note);
  project.provide('docker', plan);
  // The bridge images this run builds are removed when it ends (test processes inherit the variable).
  const record = path.join(mkdtempSync(path.join(tmpdir(), 'rt-test-images-')), 'images');
  process.env[IMAGES_RECORD] = record;
  return () => {
    removeRecordedImages(record);
    rmSync(path.dirname(record), { recursive: true, force: true });
  };
}
