import { describe, expect, it } from 'vitest';
import { channelSlug, containerName } from '../../sandbox/channel-key.js';

// Docker's rule for container names.
const DOCKER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;

describe('channel keys', () => {
  it('makes a readable slug with a short hash', () => {
    expect(channelSlug('console:main')).toMatch(/^console-main-[0-9a-f]{8}$/);
    expect(channelSlug('slack:C1/1700000000.000100')).toMatch(/^slack-c1-1700000000-000100-[0-9a-f]{8}$/);
  });

  it('gives keys that slug alike different names', () => {
    expect(channelSlug('slack:a/b')).not.toBe(channelSlug('slack:a:b'));
    expect(channelSlug('discord:ABC')).not.toBe(channelSlug('discord:abc'));
  });

  it('stays safe and short for hostile or huge keys', () => {
    for (const key of ['../../etc/passwd', '', '::', `discord:${'9'.repeat(500)}`, 'x y\n\u0000z', 'ünïcødé:chan']) {
      const slug = channelSlug(key);
      expect(slug).toMatch(/^[a-z0-9-]+$/);
      expect(slug.length).toBeLessThanOrEqual(49);
      expect(containerName('/data', key)).toMatch(DOCKER_NAME);
    }
  });

  it('scopes container names by data folder', () => {
    expect(containerName('/srv/a', 'console:main')).not.toBe(containerName('/srv/b', 'console:main'));
    expect(containerName('/srv/a', 'console:main')).toBe(containerName('/srv/a', 'console:main'));
  });
});
