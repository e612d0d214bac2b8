import type { Price } from '../config/index.js';

/** Token counts of one agent's calls. */
export interface UsageFigures {
  readonly agent: string;
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

/** US dollars for these tokens at `price` (per million): uncached input, cached input and output each at theirs. */
export function estimateCost(usage: Omit<UsageFigures, 'agent'>, price: Price): number {
  const uncached = Math.max(0, usage.input - usage.cached);
  return (uncached * price.input + usage.cached * price.cached + usage.output * price.output) / 1_000_000;
}

const n = (value: number) => value.toLocaleString('en-US');
const dollars = (value: number) => `$${value < 1 ? value.toFixed(4) : value.toFixed(2)}`;
const figures = (u: Omit<UsageFigures, 'agent'>) => `${n(u.input)} in (${n(u.cached)} cached), ${n(u.output)} out`;

/** `/status` lines: each agent's tokens in this room and in all rooms, and their estimated cost when priced. */
export function usageLines(
  usage: { readonly room: readonly UsageFigures[]; readonly total: readonly UsageFigures[] },
  agents: ReadonlyArray<{ readonly name: string; readonly price?: Price | undefined }>,
): string[] {
  const here = new Map(usage.room.map((row) => [row.agent.toLowerCase(), row]));
  const all = new Map(usage.total.map((row) => [row.agent.toLowerCase(), row]));
  if (all.size === 0) return ['Tokens: none used yet'];
  const lines = ['Tokens (this room; all rooms):'];
  for (const agent of agents) {
    const total = all.get(agent.name.toLowerCase());
    if (!total) continue;
    const room = here.get(agent.name.toLowerCase()) ?? { agent: agent.name, input: 0, cached: 0, output: 0 };
    const cost = agent.price
      ? `; about ${dollars(estimateCost(room, agent.price))} here, ${dollars(estimateCost(total, agent.price))} in all`
      : '';
    lines.push(`- @${agent.name}: ${figures(room)}; ${figures(total)}${cost}`);
  }
  return lines;
}
