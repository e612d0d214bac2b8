/**
 * The bridge's container image, built from the real Dockerfile without an image registry, for
 * tests that run it on the local engine (`docker run`, `docker compose up`). As in CI
 * (.ci/bridge-image.sh): the final stage takes the built dist/ and the production node_modules/
 * from the build context (APP_FROM=prebuilt), and its Node base is made here, from the sandbox
 * image (Debian, already on the engine) with this machine's Node binary and the `node` user the
 * official images have. Built once per content: a tag named by a digest of what goes in.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUILT_MAIN, builtBridge, ROOT } from './built-bridge.js';
import { recordBuiltImage } from './built-images.js';

const REPOSITORY = 'roundtable-bridge';

/** `docker build` with BuildKit (the Dockerfile picks its stage with a build argument). */
function buildCommand(): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  if (spawnSync('docker', ['buildx', 'version'], { stdio: 'ignore' }).status === 0) {
    return { command: 'docker', args: ['build'], env: process.env };
  }
  // Debian's docker.io CLI (before 23) has BuildKit built in, switched on by DOCKER_BUILDKIT=1.
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const cli = path.join(dir, 'docker');
    try {
      accessSync(cli, constants.X_OK);
    } catch {
      continue;
    }
    const version = spawnSync(cli, ['version', '--format', '{{.Client.Version}}'], { encoding: 'utf8' }).stdout;
    const major = Number.parseInt(version, 10);
    if (major > 0 && major < 23)
      return { command: cli, args: ['build'], env: { ...process.env, DOCKER_BUILDKIT: '1' } };
  }
  throw new Error('no BuildKit-capable docker CLI: install the buildx plugin (apt-get install docker-buildx)');
}

function imageExists(tag: string): boolean {
  return spawnSync('docker', ['image', 'inspect', tag], { stdio: 'ignore' }).status === 0;
}

function hashTree(hash: ReturnType<typeof createHash>, dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    // tsc's build record changes with every build, whatever it emitted.
    if (entry.name === '.tsbuildinfo') continue;
    const full = path.join(dir, entry.name);
    hash.update(path.relative(ROOT, full));
    if (entry.isDirectory()) hashTree(hash, full);
    else if (entry.isFile()) hash.update(readFileSync(full));
  }
}

/** The files of the Dockerfile's final stage that come from the repository. */
const CONTEXT_FILES = [
  'Dockerfile',
  'package.json',
  'package-lock.json',
  'migrations',
  'agents',
  'sandbox/runner.py',
  'sandbox/demo-workspace',
  'adapters/web/public',
];

/** Builds (or finds) the bridge image; returns its tag. `sandboxImage` is the Debian base it starts from. */
export function bridgeImage(sandboxImage: string): string {
  builtBridge();
  const hash = createHash('sha256');
  hash.update(process.version);
  hash.update(execFileSync('docker', ['image', 'inspect', '-f', '{{.Id}}', sandboxImage], { encoding: 'utf8' }));
  for (const item of CONTEXT_FILES) {
    const full = path.join(ROOT, item);
    if (statSync(full).isDirectory()) hashTree(hash, full);
    else hash.update(readFileSync(full));
  }
  hashTree(hash, path.dirname(path.dirname(BUILT_MAIN)));
  const digest = hash.digest('hex').slice(0, 16);
  const tag = `${REPOSITORY}:test-${digest}`;
  if (imageExists(tag)) return tag;

  const build = buildCommand();
  const work = mkdtempSync(path.join(tmpdir(), 'rt-bridge-image-'));
  try {
    const base = `${REPOSITORY}:test-node-${process.version}`;
    const baseDir = path.join(work, 'base');
    mkdirSync(baseDir);
    copyFileSync(process.execPath, path.join(baseDir, 'node'));
    writeFileSync(
      path.join(baseDir, 'Dockerfile'),
      [
        `FROM ${sandboxImage}`,
        'USER root',
        'COPY node /usr/local/bin/node',
        // The official node images run as `node` (uid 1000), which the Dockerfile uses.
        'RUN u="$(getent passwd 1000 | cut -d: -f1)"; g="$(getent group 1000 | cut -d: -f1)"; ' +
          'if [ -n "$g" ] && [ "$g" != node ]; then groupmod -n node "$g"; fi; ' +
          'if [ -n "$u" ] && [ "$u" != node ]; then usermod -l node -d /home/node -m "$u"; fi; ' +
          'getent group node >/dev/null || groupadd -g 1000 node; ' +
          'id node >/dev/null 2>&1 || useradd -u 1000 -g node -m node',
        'WORKDIR /',
        'ENTRYPOINT []',
        'CMD ["node"]',
        '',
      ].join('\n'),
    );
    if (!imageExists(base)) {
      execFileSync(build.command, [...build.args, '-q', '-t', base, baseDir], { env: build.env, stdio: 'pipe' });
      recordBuiltImage(base);
    }

    const context = path.join(work, 'context');
    mkdirSync(context);
    for (const item of CONTEXT_FILES) cpSync(path.join(ROOT, item), path.join(context, item), { recursive: true });
    cpSync(path.join(ROOT, 'dist'), path.join(context, 'dist'), { recursive: true });
    execFileSync('cp', [
      '-a',
      `${realpathSync(path.join(ROOT, 'node_modules'))}/.`,
      path.join(context, 'node_modules'),
    ]);
    execFileSync('npm', ['prune', '--omit=dev', '--no-audit', '--no-fund'], { cwd: context, stdio: 'pipe' });
    execFileSync(
      build.command,
      [
        ...build.args,
        '-q',
        '--build-arg',
        `NODE_IMAGE=${base}`,
        '--build-arg',
        'APP_FROM=prebuilt',
        '-t',
        tag,
        context,
      ],
      { env: build.env, stdio: 'pipe' },
    );
    recordBuiltImage(tag);
    return tag;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
