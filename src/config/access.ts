/**
 * The access policy as configured: ACCESS_USERS, ACCESS_ROLES, ACCESS_CHANNELS and each agent file's `access:`, with
 * `group:<name>` entries taken from ACCESS_GROUPS. An unknown group names the file and field.
 */
import type { AccessRule } from '../access/policy.js';
import { ConfigError } from '../errors.js';
import type { Settings } from './settings.js';

type Groups = ReadonlyMap<string, readonly string[]>;

/** Replaces each `group:<name>` with the group's ids; `where` names the setting or file field for an error. */
function expand(entries: readonly string[], groups: Groups, file: string, field: string): string[] {
  return entries.flatMap((entry) => {
    const match = /^group:(.+)$/i.exec(entry.trim());
    if (!match?.[1]) return [entry.trim()];
    const ids = groups.get(match[1].toLowerCase());
    if (!ids) {
      const known = [...groups.keys()].join(', ') || 'none';
      throw new ConfigError(
        file,
        field,
        `names group "${match[1]}", which ACCESS_GROUPS does not define (known: ${known})`,
      );
    }
    return [...ids];
  });
}

type AccessSettings = Pick<Settings, 'ACCESS_USERS' | 'ACCESS_ROLES' | 'ACCESS_CHANNELS' | 'ACCESS_GROUPS'>;

/** The bridge-wide rule. */
export function globalRule(settings: AccessSettings): AccessRule {
  const groups = settings.ACCESS_GROUPS;
  return {
    users: expand(settings.ACCESS_USERS, groups, 'environment', 'ACCESS_USERS'),
    roles: expand(settings.ACCESS_ROLES, groups, 'environment', 'ACCESS_ROLES'),
    channels: expand(settings.ACCESS_CHANNELS, groups, 'environment', 'ACCESS_CHANNELS'),
  };
}

/** An agent file's `access:`. */
export function agentRule(
  settings: AccessSettings,
  file: string,
  access: { users?: string[] | undefined; roles?: string[] | undefined; channels?: string[] | undefined },
): AccessRule {
  const groups = settings.ACCESS_GROUPS;
  return {
    users: expand(access.users ?? [], groups, file, 'access.users'),
    roles: expand(access.roles ?? [], groups, file, 'access.roles'),
    channels: expand(access.channels ?? [], groups, file, 'access.channels'),
  };
}
