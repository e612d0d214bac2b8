/** A case as readable data: one line per agent's replies and per step, valid as a TypeScript literal. */
import type { Case } from './generate.js';

export function formatCase(c: Case): string {
  const oracle = Object.entries(c.oracle)
    .filter(([, replies]) => replies.length > 0)
    .map(([agent, replies]) => `    ${JSON.stringify(agent)}: ${JSON.stringify(replies)},`);
  const steps = c.steps.map((step, i) => `    /* ${i + 1} */ ${JSON.stringify(step)},`);
  return [
    '{',
    `  world: ${JSON.stringify(c.world)},`,
    '  oracle: {',
    ...oracle,
    '  },',
    '  steps: [',
    ...steps,
    '  ],',
    '}',
  ].join('\n');
}
