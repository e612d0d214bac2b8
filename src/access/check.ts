/** `--check`'s lines about who may make the agents act (docs/trust.md). */
import type { Config } from '../config/index.js';
import type { CheckResult } from '../self-check.js';
import { describeRule } from './policy.js';

const DM_LINES = {
  pair: 'DM_POLICY=pair: a first DM gets a code an operator approves with /pair <code>',
  allow: 'DM_POLICY=allow: the access lists decide who may DM the agents',
  off: 'DM_POLICY=off: the agents take no DMs (operators excepted)',
} as const;

/** One ✓ line for the policy (read from the settings, loaded already), one per agent with its own. */
export function accessLines(config: Pick<Config, 'settings' | 'agents'>): CheckResult[] {
  const { settings } = config;
  const open = settings.ACCESS_USERS.length === 0 && settings.ACCESS_ROLES.length === 0;
  const rule = { users: settings.ACCESS_USERS, roles: settings.ACCESS_ROLES, channels: settings.ACCESS_CHANNELS };
  const operators =
    settings.OPERATORS.length > 0 ? `${settings.OPERATORS.length} operator(s) always let in` : 'no OPERATORS set';
  const lines: CheckResult[] = [
    {
      ok: true,
      item: 'access',
      detail: `${describeRule(rule)}${open ? ' (set ACCESS_USERS or ACCESS_ROLES to narrow it)' : ''}; ${DM_LINES[settings.DM_POLICY]}; ${operators}`,
    },
  ];
  for (const agent of config.agents) {
    if (agent.access)
      lines.push({ ok: true, item: `access @${agent.name}`, detail: `also only ${describeRule(agent.access)}` });
  }
  return lines;
}
