/**
 * `/budget`: the day's spend against each spending limit, and an operator's new limits (`/budget room 5`,
 * `/budget agent data 2`, `/budget bridge 20`; `off` for none, `default` for the configured one).
 */
import { type AgentConfig, type PricedSettings, type Unpriced, unpricedUnderSharedLimit } from '../../config/index.js';
import { dayOf } from '../../spend/day.js';
import type { LimitKind, LimitLine, SpendMeter } from '../../spend/meter.js';
import { formatUsd } from '../../spend/money.js';

const USAGE =
  'Use /budget to show the limits, or /budget bridge <dollars>, /budget room <dollars>, /budget agent <name> <dollars> (a number, off for none, default for the configured one).';

/** One line per limit: what was spent today (and what calls under way hold) against it. */
export function spendLines(lines: readonly LimitLine[]): string[] {
  return lines.map((line) => {
    const who = line.kind === 'bridge' ? 'bridge' : line.kind === 'room' ? 'this room' : `@${line.name}`;
    const held = line.reserved > 0 ? ` (+${formatUsd(line.reserved)} held by calls under way)` : '';
    const limit =
      line.limit === null
        ? 'no limit'
        : `of ${formatUsd(line.limit)} a day${line.limit <= line.spent ? ', reached' : ''}`;
    return `- ${who}: ${formatUsd(line.spent)}${held} ${limit}${line.override ? ' (set with /budget)' : ''}`;
  });
}

export async function budgetText(
  deps: {
    readonly meter: SpendMeter;
    readonly agents: readonly AgentConfig[];
    /** Whether embeddings and summaries are in use, and priced (a shared limit needs them priced, as at start). */
    readonly settings: PricedSettings;
    readonly timeZone: string;
    readonly clock: () => number;
  },
  room: string,
  args: string,
): Promise<string> {
  const words = args.split(/\s+/).filter(Boolean);
  if (words.length === 0) {
    const lines = await deps.meter.lines(room);
    return [`Spending on ${dayOf(deps.clock(), deps.timeZone)} (${deps.timeZone}):`, ...spendLines(lines)].join('\n');
  }
  const [scope = '', ...rest] = words.map((w) => w.replace(/^@/, ''));
  let kind: LimitKind;
  let name: string;
  let value: string | undefined;
  if (scope === 'bridge' || scope === 'room') {
    kind = scope;
    name = scope === 'room' ? room : 'bridge';
    value = rest.length === 1 ? rest[0] : undefined;
  } else if (scope === 'agent') {
    const agent = deps.agents.find((a) => a.name.toLowerCase() === (rest[0] ?? '').toLowerCase());
    if (!agent) {
      return `There is no agent named @${rest[0] ?? ''}. Agents: ${deps.agents.map((a) => `@${a.name}`).join(', ')}.`;
    }
    if (!agent.price) return `@${agent.name} has no price in ${agent.file}, so its spending cannot be limited.`;
    kind = 'agent';
    name = agent.name;
    value = rest.length === 2 ? rest[1] : undefined;
  } else {
    return USAGE;
  }
  const usd = parseLimit(value);
  if (usd === 'invalid') return USAGE;
  if (kind !== 'agent' && usd !== undefined && usd !== null) {
    const refused = unpricedRefusal(kind, unpricedUnderSharedLimit(deps.settings, deps.agents));
    if (refused) return refused;
  }
  await deps.meter.setLimit(kind, name, usd);
  const line = (await deps.meter.lines(room)).find((l) => l.kind === kind && l.name === name);
  const whose = kind === 'bridge' ? "The bridge's" : kind === 'room' ? "This room's" : `@${name}'s`;
  const spent = `spent today: ${formatUsd(line?.spent ?? 0)}`;
  if (!line || line.limit === null) return `${whose} spending is no longer limited (${spent}).`;
  return `${whose} spending limit is now ${formatUsd(line.limit)} a day${usd === undefined ? ' (as configured)' : ''} (${spent}).`;
}

/** Why a bridge's or room's limit cannot be set while something it applies to has no price (undefined: it can). */
function unpricedRefusal(kind: 'bridge' | 'room', unpriced: readonly Unpriced[]): string | undefined {
  const agents = unpriced.flatMap((u) => (u.agent ? [`@${u.agent.name}`] : []));
  const settings = unpriced.flatMap((u) => (u.setting ? [u.setting] : []));
  if (agents.length === 0 && settings.length === 0) return undefined;
  const whose = kind === 'room' ? "A room's" : "A bridge's";
  if (settings.length === 0) {
    return `${whose} limit applies to every agent, and ${agents.join(', ')} ${agents.length === 1 ? 'has' : 'have'} no price: give each a price in its agent file first.`;
  }
  const parts = [
    ...(agents.length > 0 ? [`${agents.join(', ')} ${agents.length === 1 ? 'has' : 'have'} no price`] : []),
    ...settings.map((setting) => `${setting.replace('_PRICE', '_MODEL')} has no ${setting}`),
  ];
  const where = agents.length > 0 ? 'agents in their files, the others in the environment' : 'in the environment';
  return `${whose} limit applies to every call, and ${parts.join(', ')}: price them first (${where}, then restart).`;
}

/** A limit as typed: dollars (`5`, `$2.50`), `off` (null) or `default` (undefined). */
function parseLimit(value: string | undefined): number | null | undefined | 'invalid' {
  if (value === undefined) return 'invalid';
  const word = value.toLowerCase();
  if (word === 'off' || word === 'none') return null;
  if (word === 'default') return undefined;
  const usd = Number(word.replace(/^\$/, ''));
  return Number.isFinite(usd) && usd >= 0 && word !== '' ? usd : 'invalid';
}
