import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDockerTests, sandboxImage } from './docker-harness.js';

const SCRIPT = path.resolve('sandbox/build-offline-image.sh');
const docker = (...args: string[]) => spawnSync('docker', args, { encoding: 'utf8' });
const config = (image: string) =>
  docker('image', 'inspect', '-f', '{{.Config.User}} {{.Config.WorkingDir}} {{json .Config.Cmd}}', image).stdout;
const inImage = (image: string, script: string) =>
  docker('run', '--rm', '--network', 'none', '--entrypoint', 'sh', image, '-c', script);

// `npm run sandbox:build` with SANDBOX_MCP_PACKAGES adds Node and those servers to an existing image with one layer
// (what CI does on every machine), and does nothing the next time.
describe.skipIf(!runDockerTests)('npm run sandbox:build with SANDBOX_MCP_PACKAGES on an existing image', () => {
  const tag = `roundtable-sandbox:mcp-layer-${process.pid}`;
  afterAll(() => {
    docker('image', 'rm', '-f', tag);
  });

  it('adds Node and the server with its dependencies, the image otherwise as it was, and then does nothing', () => {
    // A copy of the sandbox image under a tag of its own (a commit, so the tag is the test's alone).
    const container = docker('create', sandboxImage).stdout.trim();
    try {
      expect(docker('commit', container, tag).status).toBe(0);
    } finally {
      docker('rm', '-f', container);
    }
    const env = {
      ...process.env,
      SANDBOX_IMAGE: tag,
      SANDBOX_MCP_PACKAGES: '@modelcontextprotocol/server-filesystem',
      SANDBOX_NODE_MODULES: path.resolve('node_modules'),
    };
    const build = spawnSync('bash', [SCRIPT], { env, encoding: 'utf8' });
    expect(build.stderr).toContain(`adding Node and MCP packages to ${tag}: @modelcontextprotocol/server-filesystem`);
    expect(build.status).toBe(0);
    expect(config(tag)).toBe(config(sandboxImage));

    // As the sandbox user, with the read-only root the containers have: the server starts and says it is ready.
    const run = docker(
      'run',
      '--rm',
      '--network',
      'none',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '-e',
      'HOME=/tmp',
      '--entrypoint',
      'sh',
      tag,
      '-c',
      'node --version; id -un; echo | mcp-server-filesystem /workspace',
    );
    expect(run.stdout).toMatch(new RegExp(`^${process.version}\\nsandbox\\n`));
    expect(run.stderr).toContain('Secure MCP Filesystem Server running on stdio');
    expect(inImage(tag, 'cat /usr/local/lib/roundtable/mcp.txt').stdout).toContain(
      '@modelcontextprotocol/server-filesystem@',
    );

    const again = spawnSync('bash', [SCRIPT], { env, encoding: 'utf8' });
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('already exists with this command runner; skipping');
  });
});
