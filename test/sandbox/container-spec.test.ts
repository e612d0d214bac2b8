import { describe, expect, it } from 'vitest';
import { containerSpec, parseMemory } from '../../sandbox/container-spec.js';
import { readSettings } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';

describe('container spec', () => {
  it('hardens by default: no network, no capabilities, no new privileges, read-only root, limits', () => {
    const spec = containerSpec({
      name: 'roundtable-x',
      channelKey: 'console:main',
      scope: '/data',
      workspaceDir: '/data/workspaces/console-main-1',
      settings: readSettings({}),
    });
    const host = spec.HostConfig ?? {};
    expect(host.NetworkMode).toBe('none');
    expect(spec.NetworkDisabled).toBe(true);
    expect(host.CapDrop).toEqual(['ALL']);
    expect(host.SecurityOpt).toContain('no-new-privileges');
    expect(host.ReadonlyRootfs).toBe(true);
    expect(Object.keys(host.Tmpfs ?? {})).toEqual(['/tmp']);
    expect(host.Memory).toBe(512 * 1024 ** 2);
    expect(host.MemorySwap).toBe(host.Memory);
    expect(host.NanoCpus).toBe(1e9);
    expect(host.PidsLimit).toBe(256);
    expect(host.Binds).toEqual(['/data/workspaces/console-main-1:/workspace:rw']);
    expect(spec.WorkingDir).toBe('/workspace');
    expect(spec.User).toBeUndefined();
    expect(spec.Labels).toMatchObject({ 'roundtable.project': 'roundtable', 'roundtable.channel': 'console:main' });
  });

  it('takes every limit from the settings', () => {
    const settings = readSettings({
      SANDBOX_MEMORY: '1g',
      SANDBOX_CPUS: '0.5',
      SANDBOX_PIDS: '64',
      SANDBOX_NETWORK: 'bridge',
      SANDBOX_IMAGE: 'python:3.12-slim',
    });
    const spec = containerSpec({ name: 'n', channelKey: 'k', scope: 's', workspaceDir: '/w', settings });
    expect(spec.Image).toBe('python:3.12-slim');
    expect(spec.NetworkDisabled).toBe(false);
    expect(spec.HostConfig).toMatchObject({ NetworkMode: 'bridge', Memory: 1024 ** 3, NanoCpus: 5e8, PidsLimit: 64 });
  });

  it('parses Docker-style sizes and names the variable when one is wrong', () => {
    expect(parseMemory('512m')).toBe(512 * 1024 ** 2);
    expect(parseMemory('1.5G')).toBe(1.5 * 1024 ** 3);
    expect(parseMemory('268435456')).toBe(268435456);
    expect(parseMemory('64mb')).toBe(64 * 1024 ** 2);
    expect(() => parseMemory('lots')).toThrow(ConfigError);
    expect(() => parseMemory('1k')).toThrow(/SANDBOX_MEMORY/);
  });
});
