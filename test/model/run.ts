/**
 * One conversation through both systems: the script's steps, then a drain (every turn delivered, catch-ups done,
 * deadlines fired) so that everything settles. After every step the observations are compared; the machine's own
 * records are checked against the invariants.
 */
import { canonical, firstDifference, Renamer } from './compare.js';
import { formatCase } from './format.js';
import type { Case } from './generate.js';
import { Invariants } from './invariants.js';
import { type Decide, MachineSystem } from './machine.js';
import { ModelSystem } from './model.js';
import type { Step } from './script.js';

export interface RunOptions {
  /** A wrapped decide (the mutation tests). */
  readonly decide?: Decide;
  /** Check the invariants too (default on). */
  readonly invariants?: boolean;
  /** Compare with the model (default on; off: the invariants alone judge the machine). */
  readonly compare?: boolean;
  /** Keep what the model observed, as compared (for tests that look for a particular line). */
  readonly transcript?: boolean;
}

export interface RunResult {
  /** Every step played, the drain's included (a replayable script). */
  readonly steps: readonly Step[];
  readonly failure?: string;
  /** What the conversation went through, as the model saw it. */
  readonly coverage: ReadonlySet<string>;
  /** With `transcript`: every step's observations, as compared. */
  readonly transcript: readonly string[];
}

/** At most this many drain steps after the script. */
const DRAIN = 150;

export function runCase(c: Case, options: RunOptions = {}): RunResult {
  const model = new ModelSystem(c.world, c.oracle);
  const checks = options.invariants === false ? undefined : new Invariants(c.world, c.oracle);
  const machine = new MachineSystem(c.world, c.oracle, {
    // Every fourth conversation saves and loads the machine's state between all events, the others at restarts.
    roundTrip: (c.steps.length + c.world.turnLimit) % 4 === 0 || 'restart',
    ...(options.decide ? { decide: options.decide } : {}),
    ...(checks ? { tap: checks.tap } : {}),
  });
  const names = { model: new Renamer(), machine: new Renamer() };
  const steps: Step[] = [];
  const transcript: string[] = [];
  const play = (step: Step): string | undefined => {
    steps.push(step);
    checks?.before(step, machine);
    const expected = canonical(model.step(step), names.model);
    if (options.transcript) transcript.push(...expected);
    const observed = machine.step(step);
    const difference =
      options.compare === false ? undefined : firstDifference(expected, canonical(observed, names.machine));
    if (difference) return `step ${steps.length} (${JSON.stringify(step)}) differs:\n${difference}`;
    checks?.after(observed);
    return undefined;
  };
  const result = (failure?: string): RunResult => ({
    steps,
    coverage: model.rules.coverage,
    transcript,
    ...(failure ? { failure } : {}),
  });
  for (const step of c.steps) {
    const failure = play(step);
    if (failure) return result(failure);
  }
  let drained = false;
  for (let i = 0; i < DRAIN; i++) {
    const next = drainStep(model);
    if (!next) {
      drained = true;
      break;
    }
    const failure = play(next);
    if (failure) return result(failure);
  }
  const broken = checks?.end(drained);
  return result(broken ? `the machine broke a rule:\n${broken}` : undefined);
}

/** The next step that settles what the model still has going, or undefined when nothing is left. */
export function drainStep(model: ModelSystem): Step | undefined {
  const busy = model.busyRooms()[0];
  if (busy) return { kind: 'deliver', room: busy };
  const stalled = model.stalledRooms()[0];
  if (stalled) return { kind: 'reply-through', room: stalled };
  const held = model.heldRooms()[0];
  if (held) return { kind: 'caught-up', room: held };
  if (model.openRequests() > 0) return { kind: 'deadline' };
  return undefined;
}

/** The failure with the script that led to it, ready to keep as an example. */
export function report(c: Case, run: RunResult): string {
  return `${run.failure}\n\nscript (as played):\n${formatCase({ ...c, steps: run.steps })}`;
}
