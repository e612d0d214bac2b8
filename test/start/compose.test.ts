import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { bridgeImage } from '../helpers/bridge-image.js';
import { ROOT } from '../helpers/built-bridge.js';
import { requireDocker, runDockerTests, sandboxImage } from '../sandbox/docker-harness.js';

/** `docker-compose` (v1, Debian's) or `docker compose` (the v2 plugin). */
function composeCommand(): string[] {
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose'];
  throw new Error('neither docker-compose nor the docker compose plugin is installed (apt-get install docker-compose)');
}

interface Inspected {
  State: { Status: string; ExitCode: number };
}

describe.skipIf(!runDockerTests)('docker compose up with no platform tokens (real engine)', () => {
  let project: string;
  let name: string;
  let compose: string[];
  const env = () => ({ ...process.env, ROUNDTABLE_DATA: path.join(project, 'data') });
  const run = (...args: string[]) =>
    execFileSync(compose[0] ?? '', [...compose.slice(1), '-p', name, ...args], {
      cwd: project,
      env: env(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });

  beforeAll(() => {
    requireDocker();
    compose = composeCommand();
    const image = bridgeImage(sandboxImage);
    // The steps of compose.yaml's header, in a folder of their own: .env from .env.example (no tokens in it),
    // a data folder owned by the container's user, and the socket's group.
    project = mkdtempSync(path.join(tmpdir(), 'rt-compose-'));
    chmodSync(project, 0o755);
    name = path
      .basename(project)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '');
    cpSync(path.join(ROOT, 'agents'), path.join(project, 'agents'), { recursive: true });
    const gid = statSync('/var/run/docker.sock').gid;
    writeFileSync(
      path.join(project, '.env'),
      `${readFileSync(path.join(ROOT, '.env.example'), 'utf8')}\nDOCKER_GID=${gid}\n`,
    );
    mkdirSync(path.join(project, 'data'));
    if (process.getuid?.() === 0) chownSync(path.join(project, 'data'), 1000, 1000);
    else chmodSync(path.join(project, 'data'), 0o777);
    // compose.yaml as shipped, but for the image (built above, not by compose) and a free host port.
    const file = YAML.parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')) as {
      services: { bridge: Record<string, unknown> };
    };
    const bridge = file.services.bridge;
    delete bridge.build;
    bridge.image = image;
    bridge.ports = ['127.0.0.1::8080'];
    writeFileSync(path.join(project, 'compose.yaml'), YAML.stringify(file));
  }, 900_000);

  afterAll(() => {
    if (!project) return;
    try {
      run('down', '--volumes', '--remove-orphans', '--timeout', '5');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 120_000);

  it('ends within 30 s as a failed container whose log is the one line saying what to set, never a silent loop', async () => {
    run('up', '-d', '--no-build');
    const id = run('ps', '-q', 'bridge').trim();
    const inspect = () =>
      (JSON.parse(execFileSync('docker', ['inspect', id], { encoding: 'utf8' })) as Inspected[])[0] as Inspected;
    const upAt = Date.now();
    let state = inspect();
    // The bridge exits 1 at once; Docker restarts it after a growing delay (restart: unless-stopped),
    // so it is seen failed and waiting to restart (or stopped), never up and serving.
    const failed = () => state.State.ExitCode === 1 && ['restarting', 'exited'].includes(state.State.Status);
    while (!failed() && Date.now() - upAt < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      state = inspect();
    }
    expect(state.State).toMatchObject({ ExitCode: 1, Status: expect.stringMatching(/^(restarting|exited)$/) });

    const logs = run('logs', '--no-color', 'bridge')
      .split('\n')
      .map((line) => line.replace(/^\S+\s+\|\s?/, '').trim())
      .filter((line) => line && !/^Attaching to /.test(line));
    expect(logs.length).toBeGreaterThan(0);
    // Each start says the same one line, and nothing else: no terminal-room banner.
    expect(new Set(logs)).toEqual(
      new Set([
        'Nothing to serve: no agent in ./agents has Discord or Slack tokens, and standard input ended before the terminal room got a line. ' +
          'Add discord: { token_env: DISCORD_TOKEN_CODE } (or slack: { bot_token_env: SLACK_BOT_TOKEN_CODE, app_token_env: SLACK_APP_TOKEN_CODE }) ' +
          'to agents/code.md and set that variable, or run npm start -- --console in a terminal.',
      ]),
    );
  }, 120_000);
});
