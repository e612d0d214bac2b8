import { createHash } from 'node:crypto';

/**
 * Turns a channel key (`console:main`, `slack:C1/1700000000.000100`) into a name safe for
 * container names, labels and folders: a readable slug plus a short hash, so two keys that
 * slug alike (`a/b` and `a:b`) still get different names.
 */
export function channelSlug(channelKey: string): string {
  const readable = channelKey
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `${readable || 'channel'}-${shortHash(channelKey)}`;
}

/**
 * The container name for a channel. `scope` (the resolved data folder) is hashed in, so two
 * bridges with different data folders sharing one Docker engine never adopt each other's containers.
 */
export function containerName(scope: string, channelKey: string): string {
  return `roundtable-${shortHash(scope)}-${channelSlug(channelKey)}`;
}

/** First 8 hex digits of SHA-256: short, stable, and collisions are not a practical concern here. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}
