import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDockerSandbox } from '../../sandbox/index.js';
import { readSettings } from '../../src/config/index.js';
import { SandboxError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { DOCKER_TEST_TIMEOUT, runDockerTests, SandboxHarness } from './docker-harness.js';

const T = { timeoutMs: 20_000 };

describe('Docker sandbox without an engine', () => {
  it('answers one clear line when Docker is not reachable, and the sandbox still builds', async () => {
    const docker = new Dockerode({ socketPath: '/nonexistent/docker.sock' });
    const sandbox = createDockerSandbox({
      settings: readSettings({ DATA_DIR: '/nonexistent/data' }),
      logger: silentLogger(),
      docker,
    });
    const failure = await sandbox.exec('console:main', 'echo hi', T).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SandboxError);
    const message = (failure as SandboxError).message;
    expect(message).toBe(
      'Docker is not reachable at /nonexistent/docker.sock: start the Docker engine (dockerd) or set DOCKER_HOST',
    );
    expect(await sandbox.describe?.('console:main')).toBe(`sandbox unavailable: ${message}`);
    await sandbox.close();
  });
});

describe.skipIf(!runDockerTests)('Docker sandbox (real engine)', { timeout: DOCKER_TEST_TIMEOUT }, () => {
  const harness = new SandboxHarness();
  const template = path.join(harness.dataDir, 'template');
  mkdirSync(template);
  writeFileSync(path.join(template, 'sales.csv'), 'region,amount\nnorth,120\nsouth,80\nnorth,30\n');
  const sandbox = harness.create({ SANDBOX_TEMPLATE_DIR: template });
  let server: Server;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((socket) => {
      connections += 1;
      socket.end('hello from the host\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await harness.cleanup();
  });

  it('runs as the unprivileged user in /workspace, seeded from the template', async () => {
    const result = await sandbox.exec(
      'console:basics',
      "id -un; pwd; python3 -c \"import csv; rows = list(csv.DictReader(open('sales.csv'))); print(sum(int(r['amount']) for r in rows))\"",
      T,
    );
    expect(result).toEqual({ output: 'sandbox\n/workspace\n230\n', exitCode: 0, timedOut: false });
    const dir = sandbox.workspaceDir?.('console:basics') ?? '';
    expect(dir.startsWith(path.join(harness.dataDir, 'workspaces'))).toBe(true);
    expect(readFileSync(path.join(dir, 'sales.csv'), 'utf8')).toContain('north,120');
  });

  it('keeps two channels isolated from each other', async () => {
    await sandbox.exec('discord:1111', 'echo secret > only-here.txt', T);
    const other = await sandbox.exec('discord:2222', 'ls /workspace; cat only-here.txt', T);
    expect(other.output).not.toContain('secret');
    expect(other.output).toContain('No such file');
    expect(other.exitCode).not.toBe(0);
    const [one, two] = await Promise.all([
      sandbox.exec('discord:1111', 'hostname', T),
      sandbox.exec('discord:2222', 'hostname', T),
    ]);
    expect(one.output).not.toBe(two.output);
    expect(await harness.containers('discord:1111')).toHaveLength(1);
  });

  it('has no network: connecting to the host loopback fails', async () => {
    const port = (server.address() as { port: number }).port;
    const script = [
      'import socket',
      'for host in ("127.0.0.1", "172.17.0.1", "host.docker.internal"):',
      '    try:',
      `        socket.create_connection((host, ${port}), timeout=3).close(); print(host, "connected")`,
      '    except OSError as error:',
      '        print(host, "failed", type(error).__name__)',
    ].join('\n');
    const result = await sandbox.exec('console:network', `python3 -c '${script}'; cat /proc/net/dev`, T);
    expect(result.output).not.toContain('connected');
    expect(result.output).toMatch(/127\.0\.0\.1 failed/);
    expect(result.output).toMatch(/172\.17\.0\.1 failed/);
    // Only the loopback interface exists inside.
    expect(result.output).not.toMatch(/eth0/);
    expect(connections).toBe(0);
  });

  it('has a read-only root, a writable /tmp and no capabilities', async () => {
    const result = await sandbox.exec(
      'console:hardening',
      'touch /usr/x 2>&1; echo tmp > /tmp/t && cat /tmp/t; grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status',
      T,
    );
    expect(result.output).toContain('Read-only file system');
    expect(result.output).toContain('tmp\n');
    expect(result.output).toMatch(/CapEff:\s+0000000000000000/);
    expect(result.output).toMatch(/NoNewPrivs:\s+1/);
  });

  it('reports the container on /status: absent, then idle with the last command', async () => {
    const key = 'console:status';
    expect(await sandbox.describe?.(key)).toBe(
      'sandbox: absent (created on the next command), no command since the bridge started',
    );
    await sandbox.exec(key, 'echo hi', T);
    expect(await sandbox.describe?.(key)).toMatch(/^sandbox: idle, up \d+s, last command \d+s ago: echo hi$/);
  });

  it('recreates a container that was removed by hand, keeping the workspace', async () => {
    const key = 'console:recreate';
    await sandbox.exec(key, 'echo kept > note.txt', T);
    const [info] = await harness.containers(key);
    await harness.docker.getContainer(info?.Id ?? '').remove({ force: true });
    const result = await sandbox.exec(key, 'cat note.txt', T);
    expect(result).toEqual({ output: 'kept\n', exitCode: 0, timedOut: false });
  });

  it('resets a channel: the workspace stays unless asked to wipe it', async () => {
    const key = 'console:reset';
    await sandbox.exec(key, 'echo mine > mine.txt; rm sales.csv', T);
    await sandbox.reset?.(key);
    expect(await harness.containers(key)).toHaveLength(0);
    expect((await sandbox.exec(key, 'ls', T)).output).toBe('mine.txt\n');

    await sandbox.reset?.(key, { wipeWorkspace: true });
    // Wiped, then seeded from the template again on the next container.
    expect((await sandbox.exec(key, 'ls', T)).output).toBe('sales.csv\n');
  });

  it('names SANDBOX_IMAGE and what Docker said when the image does not exist', async () => {
    const missing = harness.create({ SANDBOX_IMAGE: 'roundtable-missing-image:none' });
    const failure = await missing.exec('console:no-image', 'true', T).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SandboxError);
    expect((failure as Error).message).toBe(
      'SANDBOX_IMAGE=roundtable-missing-image:none: Docker says No such image: roundtable-missing-image:none ' +
        '(build it with npm run sandbox:build, or correct SANDBOX_IMAGE)',
    );
    expect((failure as SandboxError).problem).toBe('image');
  });

  it('names a misspelt SANDBOX_NETWORK and what Docker said, and leaves no container behind', async () => {
    const key = 'console:bad-network';
    const misspelt = harness.create({ SANDBOX_NETWORK: 'bridgee' });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const failure = await misspelt.exec(key, 'true', T).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SandboxError);
      expect((failure as Error).message).toBe(
        'SANDBOX_NETWORK=bridgee: Docker says network bridgee not found ' +
          '(docker network ls lists the networks; none, the default, means no network)',
      );
      // `docker ps -a` by the sandbox's labels: nothing, not even in state Created.
      expect(await harness.containers(key)).toEqual([]);
    }
    const sharing = harness.create({ SANDBOX_NETWORK: 'container:roundtable-no-such-container' });
    const failure = await sharing.exec(key, 'true', T).catch((error: unknown) => error);
    expect((failure as Error).message).toBe(
      'SANDBOX_NETWORK=container:roundtable-no-such-container: Docker says No such container: ' +
        'roundtable-no-such-container (docker ps lists the containers; none, the default, means no network)',
    );
    expect(await harness.containers(key)).toEqual([]);
  });

  it('names SANDBOX_CPUS and what Docker said when the engine has fewer CPUs', async () => {
    const { NCPU: cpus } = (await harness.docker.info()) as { NCPU: number };
    const greedy = harness.create({ SANDBOX_CPUS: String(cpus + 1) });
    const failure = await greedy.exec('console:cpus', 'true', T).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SandboxError);
    expect((failure as Error).message).toMatch(
      new RegExp(`^SANDBOX_CPUS=${cpus + 1}: Docker says .*\\b${cpus} CPUs available \\(lower SANDBOX_CPUS\\)$`),
    );
    expect(await harness.containers('console:cpus')).toEqual([]);
  });

  it('checks at start-up what the engine would refuse, one line per setting', async () => {
    const { NCPU: cpus } = (await harness.docker.info()) as { NCPU: number };
    expect(await harness.create().check?.()).toEqual([]);
    expect(await harness.create({ SANDBOX_NETWORK: 'bridgee', SANDBOX_CPUS: String(cpus + 1) }).check?.()).toEqual([
      'SANDBOX_NETWORK=bridgee: Docker says network bridgee not found ' +
        '(docker network ls lists the networks; none, the default, means no network)',
      `SANDBOX_CPUS=${cpus + 1}: the engine has ${cpus} CPU${cpus === 1 ? '' : 's'} (set SANDBOX_CPUS to ${cpus} or less)`,
    ]);
    expect(await harness.create({ SANDBOX_IMAGE: 'roundtable-missing-image:none' }).check?.()).toEqual([
      'SANDBOX_IMAGE=roundtable-missing-image:none: Docker says No such image: roundtable-missing-image:none ' +
        '(build it with npm run sandbox:build, or correct SANDBOX_IMAGE)',
    ]);
    // The throw-away container of the passing check is gone.
    expect(await harness.trialContainers()).toEqual([]);
  });

  it('says a missing template folder is missing, not that Docker is unreachable', async () => {
    const gone = path.join(harness.dataDir, 'template-removed-meanwhile');
    const sandbox = harness.create({ SANDBOX_TEMPLATE_DIR: gone });
    const failure = await sandbox.exec('console:no-template', 'true', T).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SandboxError);
    expect((failure as Error).message).toBe(
      `the workspace template folder ${gone} (SANDBOX_TEMPLATE_DIR) does not exist`,
    );
  });

  it('says a start-up check that ran out of time timed out, instead of blaming the image', async () => {
    // 1 ms stands for an engine too busy to answer within the bound.
    const slow = harness.create({}, { probeTimeoutMs: 1 });
    const failure = await slow.exec('console:slow-probe', 'true', T).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SandboxError);
    expect((failure as Error).message).toBe(
      'the sandbox container did not answer its start-up check within 1 ms (the machine or the Docker engine is overloaded); try the command again',
    );
    // Not left running for nobody: the next command makes a fresh one.
    expect(await harness.containers('console:slow-probe')).toEqual([]);
  });

  it('adopts the existing container after a restart, workspace intact', async () => {
    const key = 'slack:C123/1700000000.000100';
    const first = harness.create({ SANDBOX_KEEP_ON_EXIT: 'true' });
    const hostname = (await first.exec(key, 'echo survived > state.txt; hostname', T)).output;
    await first.close();
    expect(await harness.containers(key)).toHaveLength(1);

    const second = harness.create();
    const result = await second.exec(key, 'hostname; cat state.txt', T);
    expect(result.output).toBe(`${hostname}survived\n`);
    expect(await harness.containers(key)).toHaveLength(1);
    await second.close();
    expect(await harness.containers(key)).toHaveLength(0);
  });

  it('removes its running containers on close unless told to keep them', async () => {
    const own = harness.create();
    await Promise.all(['console:close-a', 'console:close-b'].map((key) => own.exec(key, 'true', T)));
    expect(
      (await harness.containers('console:close-a')).length + (await harness.containers('console:close-b')).length,
    ).toBe(2);
    await own.close();
    expect(await harness.containers('console:close-a')).toHaveLength(0);
    expect(await harness.containers('console:close-b')).toHaveLength(0);
    await expect(own.exec('console:close-a', 'true', T)).rejects.toThrow(SandboxError);
  });

  it('removes a container left idle for SANDBOX_IDLE_MINUTES, and recreates it on demand', async () => {
    const key = 'console:idle';
    const idle = harness.create({ SANDBOX_IDLE_MINUTES: '1' });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await idle.exec(key, 'echo before > idle.txt', T);
      vi.advanceTimersByTime(59_000);
      expect(await harness.containers(key)).toHaveLength(1);
      vi.advanceTimersByTime(2_000);
    } finally {
      vi.useRealTimers();
    }
    await vi.waitFor(async () => expect(await harness.containers(key)).toHaveLength(0), { timeout: 10_000 });
    expect((await idle.exec(key, 'cat idle.txt', T)).output).toBe('before\n');
  });
});
