/** The conformance property as fast-check runs it: a generated case, played through both systems. */
import fc from 'fast-check';
import { type Case, caseArb } from './generate.js';
import { type RunOptions, report, runCase } from './run.js';

export interface Outcome {
  /** Conversations played. */
  readonly runs: number;
  /** How many conversations went through each situation. */
  readonly coverage: ReadonlyMap<string, number>;
  /** The first failure, shrunk, with its seed and script; undefined when all passed. */
  readonly failure?: string;
  readonly counterexample?: Case;
}

export function check(params: { seed: number; runs: number; shrink?: boolean }, options: RunOptions = {}): Outcome {
  const coverage = new Map<string, number>();
  let runs = 0;
  let last: { c: Case; text: string } | undefined;
  const property = fc.property(caseArb, (c) => {
    const run = runCase(c, options);
    if (run.failure) {
      last = { c: { ...c, steps: run.steps }, text: report(c, run) };
      return false;
    }
    runs += 1;
    for (const what of run.coverage) coverage.set(what, (coverage.get(what) ?? 0) + 1);
    return true;
  });
  const details = fc.check(property, {
    seed: params.seed,
    numRuns: params.runs,
    endOnFailure: params.shrink === false,
  });
  if (!details.failed || !last) return { runs, coverage };
  const failure = [
    `Conformance failed (seed ${details.seed}, path ${details.counterexamplePath}, after ${details.numRuns} runs and ${details.numShrinks} shrinks).`,
    `Again: npm run fuzz -- --seed ${details.seed} --runs ${details.numRuns}`,
    last.text,
  ].join('\n');
  return { runs, coverage, failure, counterexample: last.c };
}
