/**
 * Conversations kept from conformance failures (examples.ts), played through the model and the machine: they must
 * agree at every step, and the machine must keep every invariant.
 */
import { describe, expect, it } from 'vitest';
import { EXAMPLES } from './examples.js';
import { BY_HAND } from './examples-by-hand.js';
import { report, runCase } from './run.js';

describe('kept conversations', () => {
  it.each([...EXAMPLES, ...BY_HAND].map((e) => [e.name, e] as const))('%s', (_, example) => {
    const run = runCase(example.case, { transcript: true });
    if (run.failure) expect.fail(report(example.case, run));
    for (const line of example.shows ?? [])
      expect(
        run.transcript.some((seen) => seen.includes(line)),
        line,
      ).toBe(true);
  });
});
