/**
 * Conversations kept from conformance failures (examples.ts), played through the model and the machine: they must
 * agree at every step, and the machine must keep every invariant.
 */
import { describe, expect, it } from 'vitest';
import { EXAMPLES } from './examples.js';
import { report, runCase } from './run.js';

describe('kept conversations', () => {
  it.each(EXAMPLES.map((e) => [e.name, e] as const))('%s', (_, example) => {
    const run = runCase(example.case);
    if (run.failure) expect.fail(report(example.case, run));
    expect(run.steps.length).toBeGreaterThanOrEqual(example.case.steps.length);
  });
});
