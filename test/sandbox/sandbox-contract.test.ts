/**
 * One contract for every way the sandbox reaches its engine and keeps its workspaces: the local engine with
 * bind-mounted host folders, the local engine with volumes, and the same engine reached over TCP with TLS (a
 * proxy on 127.0.0.1 that requires a client certificate), with volumes. Each case uses one sandbox and a few
 * channels, so the whole contract stays within a couple of minutes on a busy machine.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineClient } from '../../sandbox/engine-client.js';
import { createDockerSandbox } from '../../sandbox/index.js';
import { Uploads } from '../../src/bridge/inbound/uploads.js';
import { readSettings } from '../../src/config/index.js';
import { silentLogger } from '../../src/log.js';
import type { Inbound, Sandbox } from '../../src/ports.js';
import { globTool, readFilesTool, writeFilesTool } from '../../src/tools/files.js';
import type { Tool } from '../../src/tools/tool.js';
import { startTlsEngine, type TlsEngine } from '../helpers/tls-engine.js';
import { DOCKER_TEST_TIMEOUT, runDockerTests, SandboxHarness } from './docker-harness.js';

const T = { timeoutMs: 30_000 };

interface Mode {
  readonly name: string;
  readonly workspaces: 'bind' | 'volume';
  readonly tls: boolean;
}

const MODES: Mode[] = [
  { name: 'local engine, bind workspaces', workspaces: 'bind', tls: false },
  { name: 'local engine, volume workspaces', workspaces: 'volume', tls: false },
  { name: 'engine over TCP with TLS, volume workspaces', workspaces: 'volume', tls: true },
];

describe.skipIf(!runDockerTests).each(MODES)('sandbox contract: $name', { timeout: DOCKER_TEST_TIMEOUT }, (mode) => {
  const harness = new SandboxHarness();
  const template = path.join(harness.dataDir, 'template');
  mkdirSync(path.join(template, 'data'), { recursive: true });
  writeFileSync(path.join(template, 'data', 'sales.csv'), 'region,amount\nnorth,120\nsouth,80\n');
  let tls: TlsEngine | undefined;
  let env: Record<string, string> = {};
  let docker: Dockerode = harness.docker;
  let sandbox: Sandbox;
  const key = `console:contract-${mode.workspaces}-${mode.tls}`;
  const volumeNames = async () =>
    (
      await harness.docker.listVolumes({
        filters: { label: [`roundtable.scope=${harness.dataDir}`, `roundtable.channel=${key}`] },
      })
    ).Volumes.map((volume) => volume.Name);

  const open = (extra: Record<string, string> = {}) =>
    harness.create(
      { ...env, SANDBOX_TEMPLATE_DIR: template, SANDBOX_DISK: '20m', SANDBOX_FILES: '500', ...extra },
      { docker },
    );

  const call = async (tool: Tool, args: Record<string, unknown>, box = sandbox, channelKey = key) => {
    const result = await tool.run(args, {
      agent: 'coder',
      channelKey,
      sandbox: box,
      commandTimeoutMs: 30_000,
      signal: new AbortController().signal,
    });
    return JSON.parse(result.output) as Record<string, unknown>;
  };

  beforeAll(async () => {
    env = { SANDBOX_WORKSPACES: mode.workspaces, SANDBOX_KEEP_ON_EXIT: 'true' };
    if (mode.tls) {
      tls = await startTlsEngine();
      env = {
        ...env,
        DOCKER_HOST: `tcp://127.0.0.1:${tls.port}`,
        DOCKER_TLS_VERIFY: '1',
        DOCKER_CERT_PATH: tls.certDir,
      };
      docker = engineClient(readSettings(env));
    }
    sandbox = open();
  });
  afterAll(async () => {
    await harness.cleanup();
    await tls?.close();
  });

  it('creates the channel container on the first command, as the sandbox user in a seeded /workspace', async () => {
    const result = await sandbox.exec(key, 'id -un; pwd; cat data/sales.csv; touch made-here && echo writable', T);
    expect(result).toEqual({
      output: 'sandbox\n/workspace\nregion,amount\nnorth,120\nsouth,80\nwritable\n',
      exitCode: 0,
      timedOut: false,
    });
    const [container] = await harness.containers(key);
    expect(container?.Labels['roundtable.channel']).toBe(key);
    const mounts = (await harness.docker.getContainer(container?.Id ?? '').inspect()).Mounts;
    expect(mounts.map((mount) => [mount.Type, mount.Destination])).toEqual([[mode.workspaces, '/workspace']]);
    if (mode.workspaces === 'volume') {
      expect(sandbox.workspaceDir).toBeUndefined();
      expect(await volumeNames()).toEqual([mounts[0]?.Name]);
    }
    if (mode.tls) expect(tls?.accepted()).toBeGreaterThan(0);
  });

  it('passes the start-up check: a throw-away container sees what the bridge puts in its workspace', async () => {
    expect(await sandbox.check?.()).toEqual([]);
    expect(await harness.trialContainers()).toEqual([]);
  });

  it('keeps the limits: no network, every capability dropped, read-only root, memory and pids capped', async () => {
    const [container] = await harness.containers(key);
    const info = await harness.docker.getContainer(container?.Id ?? '').inspect();
    expect(info.HostConfig.NetworkMode).toBe('none');
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.Memory).toBe(512 * 1024 ** 2);
    expect(info.HostConfig.PidsLimit).toBe(256);
    const result = await sandbox.exec(key, 'touch /etc/x 2>&1', T);
    expect(result.output).toMatch(/Read-only file system/);
  });

  it('stops a command at its time limit and the container stays usable', async () => {
    const before = (await sandbox.exec(key, 'hostname', T)).output;
    const slow = await sandbox.exec(key, 'echo started; sleep 1000', { timeoutMs: 3_000 });
    expect(slow).toEqual({ output: 'started\n', exitCode: null, timedOut: true });
    expect((await sandbox.exec(key, 'hostname', T)).output).toBe(before);
  });

  it('moves files in and out: write_files, read_files, glob and uploads reach what commands see', async () => {
    const written = await call(writeFilesTool, { files: [{ filename: 'notes/todo.txt', content: 'ship it\n' }] });
    expect(written).toEqual({ 'notes/todo.txt': 'success' });
    const seen = await sandbox.exec(key, 'cat notes/todo.txt; stat -c %U notes/todo.txt notes', T);
    expect(seen.output).toBe('ship it\nsandbox\nsandbox\n');

    await sandbox.exec(key, "printf 'made by bash' > out.txt; ln -s /etc/hostname leak; ln -s out.txt alias", T);
    const read = await call(readFilesTool, { files: ['out.txt', '/workspace/alias', 'leak', 'missing.txt', 'notes'] });
    expect(read).toEqual({
      'out.txt': 'made by bash',
      '/workspace/alias': 'made by bash',
      leak: '[ERROR: leak is a symlink that points outside /workspace]',
      'missing.txt': '[ERROR: no such file]',
      notes: '[ERROR: is a directory (list it with glob)]',
    });
    expect(await call(globTool, { patterns: ['**/*.txt', 'data/*'] })).toEqual({
      '**/*.txt': ['notes/todo.txt', 'out.txt'],
      'data/*': ['data/sales.csv'],
    });

    const uploads = new Uploads({
      sandbox,
      settings: { SLACK_MAX_FILE_MB: 20, DISCORD_MAX_FILE_MB: 20, WEB_MAX_FILE_MB: 20 },
      logger: silentLogger(),
      stored: async () => false,
    });
    const megabyte = Buffer.alloc(1024 * 1024, 'x');
    const upload = (name: string, content: Buffer): Inbound => ({
      platform: 'console',
      channel: key.slice('console:'.length),
      messageId: `m-${name}-${Math.random()}`,
      author: { id: 'u1', name: 'alice', kind: 'human' },
      text: 'numbers',
      files: [{ name, size: content.length, mimeType: 'text/csv', download: async () => content }],
    });
    expect((await uploads.take(upload('big.csv', megabyte))).fileLines).toEqual([
      '[file: uploads/big.csv (text/csv, 1.0 MB)]',
    ]);
    expect((await uploads.take(upload('big.csv', Buffer.from('again')))).fileLines).toEqual([
      '[file: uploads/big-2.csv (text/csv, 5 B)]',
    ]);
    const listed = await sandbox.exec(
      key,
      'wc -c < uploads/big.csv; stat -c %U uploads/big.csv; cat uploads/big-2.csv',
      T,
    );
    expect(listed.output).toBe(`${1024 * 1024}\nsandbox\nagain`);
  });

  it('caps the workspace: no file grows past the allowance, and a file-tool write that would overfill it is refused', async () => {
    const disk = `${key}-disk`;
    const big = await sandbox.exec(disk, 'head -c 30M /dev/zero > big; echo exit=$?', T);
    expect(big.output).toMatch(/File size limit exceeded|exit=153|stopped: the workspace went past/);
    const size = await sandbox.exec(disk, 'wc -c < big', T);
    expect(Number(size.output.split('\n')[0])).toBeLessThanOrEqual(20 * 1024 ** 2);
    // Over the allowance now: removing files is what still works, then there is room again.
    await sandbox.exec(disk, 'rm big', T);
    expect((await sandbox.exec(disk, 'head -c 15M /dev/zero > data.bin; echo exit=$?', T)).output).toBe('exit=0\n');
    await expect(sandbox.checkDisk?.(disk, 1024)).resolves.toBeUndefined();
    await expect(sandbox.checkDisk?.(disk, 10 * 1024 ** 2)).rejects.toThrow(
      /the workspace is full: it holds 15(\.\d)? MiB of its 20 MiB limit \(SANDBOX_DISK\)/,
    );
    const tool = await call(
      writeFilesTool,
      { files: [{ filename: 'more.txt', content: 'y'.repeat(1024) }] },
      sandbox,
      disk,
    );
    expect(tool).toEqual({ 'more.txt': 'success' });
  });

  it('stops a command that takes the workspace past SANDBOX_DISK or SANDBOX_FILES while it runs; rm still works', async () => {
    const watched = `${key}-watch`;
    // Files each well under what is left: the file-size cap alone would let all 72 MiB through.
    const fill = await sandbox.exec(
      watched,
      'for i in 1 2 3 4 5 6 7 8; do head -c 9M /dev/zero > part$i; sleep 0.5; done; echo finished',
      T,
    );
    expect(fill.output).not.toContain('finished');
    expect(fill.output).toMatch(
      /\[ERROR: stopped: the workspace went past its 20 MiB disk limit \(SANDBOX_DISK\) while this command ran; it holds (at least )?[\d.]+ MiB/,
    );
    expect((await sandbox.exec(watched, 'rm part* && echo removed', T)).output).toBe('removed\n');
    const flood = await sandbox.exec(
      watched,
      'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); : > e$i; done; echo finished',
      T,
    );
    expect(flood.output).not.toContain('finished');
    expect(flood.output).toMatch(
      /\[ERROR: stopped: the workspace went past its limit of 500 files and folders \(SANDBOX_FILES\) while this command ran/,
    );
    expect((await sandbox.exec(watched, 'rm -f e* && ls -A', T)).output).toBe('data\n');
  });

  it('adopts its containers after a restart, workspace and all, and removes them on close without it', async () => {
    const before = (await sandbox.exec(key, 'hostname', T)).output;
    await sandbox.close(); // SANDBOX_KEEP_ON_EXIT=true: the container stays for the next process
    const restarted = open({ SANDBOX_KEEP_ON_EXIT: 'false' });
    const after = await restarted.exec(key, 'hostname; cat notes/todo.txt', T);
    expect(after.output).toBe(`${before}ship it\n`);
    expect(await harness.containers(key)).toHaveLength(1);
    await restarted.close();
    expect(await harness.containers(key)).toHaveLength(0);
    // The workspace outlives its container.
    const again = open();
    expect((await again.exec(key, 'cat notes/todo.txt', T)).output).toBe('ship it\n');
    sandbox = again;
  });

  it('wipes the workspace on /reset workspace; the next container starts from the template', async () => {
    await sandbox.reset?.(key, { wipeWorkspace: true });
    expect(await harness.containers(key)).toHaveLength(0);
    if (mode.workspaces === 'volume') expect(await volumeNames()).toEqual([]);
    const fresh = await sandbox.exec(key, 'ls -A', T);
    expect(fresh.output).toBe('data\n');
  });
});

describe('the TLS proxy the contract reaches the engine through', () => {
  let tls: TlsEngine;
  beforeAll(async () => {
    tls = await startTlsEngine('/nonexistent/docker.sock');
  });
  afterAll(() => tls.close());

  it('refuses a client without a certificate its CA signed, and one without TLS', async () => {
    const env = { DOCKER_HOST: `tcp://127.0.0.1:${tls.port}`, SANDBOX_WORKSPACES: 'volume', DOCKER_TLS_VERIFY: '1' };
    // The stranger's ca.pem is the right one, so only its own certificate is wrong.
    const stranger = engineClient(readSettings({ ...env, DOCKER_CERT_PATH: tls.strangerDir }));
    await expect(stranger.ping()).rejects.toThrow();
    const plain = new Dockerode({ host: '127.0.0.1', port: tls.port, protocol: 'http' });
    await expect(plain.ping()).rejects.toThrow();
    expect(tls.accepted()).toBe(0);
  });
});

describe('volume workspaces without an engine', () => {
  it("names the engine on an upload's line and in a file tool's answer, and still delivers the message", async () => {
    const sandbox = createDockerSandbox({
      settings: readSettings({ DATA_DIR: '/nonexistent/data', SANDBOX_WORKSPACES: 'volume' }),
      logger: silentLogger(),
      docker: new Dockerode({ socketPath: '/nonexistent/docker.sock' }),
    });
    const uploads = new Uploads({
      sandbox,
      settings: { SLACK_MAX_FILE_MB: 20, DISCORD_MAX_FILE_MB: 20, WEB_MAX_FILE_MB: 20 },
      logger: silentLogger(),
      stored: async () => false,
    });
    const event = await uploads.take({
      platform: 'slack',
      channel: 'C1',
      messageId: 'm1',
      author: { id: 'u1', name: 'alice', kind: 'human' },
      text: 'numbers',
      files: [{ name: 'sales.csv', size: 5, mimeType: 'text/csv', download: async () => Buffer.from('a,b\n') }],
    });
    const down =
      'Docker is not reachable at /nonexistent/docker.sock: start the Docker engine (dockerd) or set DOCKER_HOST';
    expect(event.text).toBe('numbers');
    expect(event.fileLines).toEqual([
      `[file: sales.csv (text/csv, 5 B) not saved: the workspace could not be prepared (${down})]`,
    ]);
    const read = await readFilesTool.run(
      { files: ['a.txt'] },
      { agent: 'coder', channelKey: 'slack:C1', sandbox, commandTimeoutMs: 5000, signal: new AbortController().signal },
    );
    expect(JSON.parse(read.output)).toEqual({ 'a.txt': `[ERROR: the workspace is not ready: ${down}]` });
    await sandbox.close();
  });
});
