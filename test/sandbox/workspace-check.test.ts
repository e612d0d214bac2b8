import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { DOCKER_TEST_TIMEOUT, requireDocker, runDockerTests, sandboxImage } from './docker-harness.js';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const MAIN = path.join(ROOT, 'src/main.ts');

/**
 * The bridge in a container with `-e DATA_DIR=/data` on a volume: it writes into a /data the engine
 * does not see, since the engine resolves bind mounts on its own host. Here the same is made
 * without building an image: `--check` runs in a mount namespace of its own, where DATA_DIR is a
 * tmpfs mounted over the folder. The engine, outside that namespace, sees the empty folder beneath;
 * everything else (the socket, the model endpoint, the image) is as in the passing run.
 * `unshare --mount` needs root; otherwise a user namespace grants it (--map-root-user).
 */
const PRIVATE_DATA_DIR = [
  'unshare',
  ...(process.getuid?.() === 0 ? [] : ['--map-root-user']),
  '--mount',
  'sh',
  '-c',
  'mount -t tmpfs roundtable-private "$DATA_DIR" && exec "$0" "$@"',
];

describe.runIf(runDockerTests)(
  '--check proves the sandbox sees the workspace',
  { timeout: DOCKER_TEST_TIMEOUT },
  () => {
    requireDocker();
    const docker = new Dockerode();
    let llm: FakeOpenAI;
    let dir: string;
    let dataDir: string;
    beforeAll(async () => {
      // The server lists the agent's model, as --check asks it to.
      llm = await startFakeOpenAI({ models: ['m'] });
      dir = mkdtempSync(path.join(tmpdir(), 'rt-workspace-check-'));
      mkdirSync(path.join(dir, 'agents'));
      writeFileSync(
        path.join(dir, 'agents', 'code.md'),
        '---\nname: code\nmodel: m\ntools: [bash]\n---\nYou are code.\n',
      );
      dataDir = path.join(dir, 'data');
    });
    afterAll(async () => {
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    });

    async function check(wrapper: string[]): Promise<{ code: number; lines: string[] }> {
      const [command = TSX, ...args] = [...wrapper, TSX, MAIN, '--check'];
      const env = {
        ...process.env,
        DATA_DIR: dataDir,
        OPENAI_BASE_URL: llm.baseURL,
        SANDBOX_IMAGE: sandboxImage,
        LOG_LEVEL: 'silent',
        // A room with no terminal needed: run without one (and maybe in a container), the terminal room serves nobody.
        WEB_PORT: '0',
      };
      const done = await exec(command, args, { cwd: dir, env, timeout: 90_000 }).then(
        (result) => ({ code: 0, out: result.stdout }),
        (error: { code: number; stdout: string; stderr: string }) => {
          if (typeof error.code !== 'number') throw error;
          return { code: error.code, out: error.stdout + error.stderr };
        },
      );
      return { code: done.code, lines: done.out.trimEnd().split('\n') };
    }

    const trials = () =>
      docker.listContainers({
        all: true,
        filters: { label: ['roundtable.project=roundtable', `roundtable.scope=${dataDir}`, 'roundtable.trial'] },
      });

    it('passes when a container sees what the bridge writes under DATA_DIR', async () => {
      const { code, lines } = await check([]);
      expect(lines).toContain(
        `✓ sandbox container: a throw-away one started with these settings and read a file the bridge wrote in ${dataDir}/workspaces`,
      );
      expect(code).toBe(0);
      expect(await trials()).toEqual([]);
    });

    it('fails when the engine sees another folder at DATA_DIR, saying how to mount it', async () => {
      // What the engine will see: empty folders. Made here rather than by the engine (as root), so
      // that any user can remove them again.
      mkdirSync(path.join(dataDir, 'workspaces', '.roundtable-check'), { recursive: true });
      const { code, lines } = await check(PRIVATE_DATA_DIR);
      const line = lines.find((l) => l.startsWith('✗ sandbox container: '));
      expect(line).toMatch(
        new RegExp(
          `^✗ sandbox container: DATA_DIR=${dataDir}: a sandbox container does not see the files the bridge writes there ` +
            '\\(cat: /workspace/check-[0-9a-f]{8}: No such file or directory\\): the Docker engine resolves bind mounts ' +
            `on its own host, where ${dataDir} is another folder; mount the data folder at the same path inside and ` +
            "outside the bridge's container, as compose.yaml does: -v /srv/roundtable:/srv/roundtable -e " +
            'DATA_DIR=/srv/roundtable$',
        ),
      );
      // The only ✗: every other item passes as in the run above.
      expect(lines.filter((l) => l.startsWith('✗'))).toEqual([line]);
      expect(code).toBe(1);
      expect(await trials()).toEqual([]);
    });
  },
);
