/**
 * Who may make the agents act: the access policy (ACCESS_USERS, ACCESS_ROLES, ACCESS_CHANNELS, and an agent file's
 * `access:`) read against the platform's facts about one message's author and room. Pure: the shell calls it for
 * each human message and hands `decide` the agents that human may wake.
 */

/** One list of the policy. Empty `users` and `roles` together: everyone the platform lets in. */
export interface AccessRule {
  /** Platform user ids (`123`, `U123`), optionally with the platform (`discord:123`). */
  readonly users: readonly string[];
  /** Discord role ids, Slack user group ids (`S123`); optionally with the platform. */
  readonly roles: readonly string[];
  /** Channel ids or `#names`, optionally with the platform; empty: every channel the bots are in. */
  readonly channels: readonly string[];
}

export const OPEN_RULE: AccessRule = { users: [], roles: [], channels: [] };

/** What the platform says about a message's author and room. */
export interface Asker {
  readonly platform: string;
  readonly userId: string;
  /** Their roles or user groups, where the platform tells. */
  readonly roles?: readonly string[] | undefined;
  readonly channel: string;
  /** The channel's name without `#`, where the platform tells. */
  readonly channelName?: string | undefined;
}

/** Why a rule does not let someone in (for the person's one line, `/access` and the decision record). */
export type Refusal = 'user' | 'channel';

/** `discord:123` matches on Discord only; a bare `123` on any platform. */
function matches(entry: string, platform: string, value: string): boolean {
  const colon = entry.indexOf(':');
  if (colon > 0 && !entry.startsWith('#')) {
    const scope = entry.slice(0, colon).toLowerCase();
    if (scope === platform.toLowerCase()) return entry.slice(colon + 1) === value;
    if (/^[a-z]+$/.test(scope)) return false; // another platform's entry
  }
  return entry === value;
}

function inChannels(rule: AccessRule, asker: Asker): boolean {
  if (rule.channels.length === 0) return true;
  const name = asker.channelName?.toLowerCase();
  return rule.channels.some((entry) => {
    const bare = entry.replace(/^[a-z]+:(?=#)/i, '');
    if (bare.startsWith('#')) {
      const scoped = bare !== entry && !entry.toLowerCase().startsWith(`${asker.platform.toLowerCase()}:`);
      return !scoped && name !== undefined && bare.slice(1).toLowerCase() === name;
    }
    // A Slack thread is a room of its own (`C123/1700000000.0001`): its channel's entry covers it.
    const channel = asker.channel.split('/')[0] ?? asker.channel;
    return matches(entry, asker.platform, channel);
  });
}

/** Undefined when the rule lets the asker in; else why not. */
export function refusal(rule: AccessRule, asker: Asker): Refusal | undefined {
  if (!inChannels(rule, asker)) return 'channel';
  if (rule.users.length === 0 && rule.roles.length === 0) return undefined;
  if (rule.users.some((entry) => matches(entry, asker.platform, asker.userId))) return undefined;
  const roles = asker.roles ?? [];
  if (rule.roles.some((entry) => roles.some((role) => matches(entry, asker.platform, role)))) return undefined;
  return 'user';
}

/** Whether the rule names the asker by their id or role (not merely "everyone"). */
export function names(rule: AccessRule, asker: Asker): boolean {
  if (rule.users.length === 0 && rule.roles.length === 0) return false;
  return refusal({ ...rule, channels: [] }, asker) === undefined;
}

/** The bridge's policy: the global rule, each agent's own narrower rule, and the people operators allowed or blocked. */
export interface AccessPolicy {
  readonly rule: AccessRule;
  /** Per agent (lower-case name): its file's `access:`; absent: the global rule alone. */
  readonly agents: ReadonlyMap<string, AccessRule>;
  /** The bridge's operators: always let in. */
  readonly operators: ReadonlySet<string>;
}

/**
 * The agents a human may wake here, in the order given, and why the others are refused. Operators may wake every
 * agent. An agent's own rule narrows the global one (both must let the human in).
 */
export function wakeable(
  policy: AccessPolicy,
  asker: Asker,
  agents: readonly string[],
): { readonly allowed: string[]; readonly refused: ReadonlyMap<string, Refusal> } {
  if (policy.operators.has(asker.userId)) return { allowed: [...agents], refused: new Map() };
  const global = refusal(policy.rule, asker);
  const allowed: string[] = [];
  const refused = new Map<string, Refusal>();
  for (const agent of agents) {
    const own = policy.agents.get(agent.toLowerCase());
    const why = global ?? (own ? refusal(own, asker) : undefined);
    if (why) refused.set(agent, why);
    else allowed.push(agent);
  }
  return { allowed, refused };
}

/** The policy in a few lines (`/access`, `--check`, `/status`). */
export function describeRule(rule: AccessRule): string {
  const who =
    rule.users.length === 0 && rule.roles.length === 0
      ? 'everyone the platform lets in'
      : [
          rule.users.length > 0 ? `users ${rule.users.join(', ')}` : '',
          rule.roles.length > 0 ? `roles/groups ${rule.roles.join(', ')}` : '',
        ]
          .filter(Boolean)
          .join('; ');
  const where = rule.channels.length === 0 ? 'every channel' : rule.channels.join(', ');
  return `${who}, in ${where}`;
}
