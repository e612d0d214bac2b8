/**
 * One generated conversation through the model and through a real bridge on a platform, compared after every step
 * (canonical observations up to id renaming, as the machine is compared), then drained as run.ts drains it. Each step
 * is first put into the form the platform carries; both sides play that form.
 */
import fc from 'fast-check';
import { canonical, Renamer } from '../../model/compare.js';
import { formatCase } from '../../model/format.js';
import type { Case } from '../../model/generate.js';
import { ModelSystem } from '../../model/model.js';
import { drainStep } from '../../model/run.js';
import type { Observed, Step, World } from '../../model/script.js';
import { type BridgeShell, type MutableOracle, sharedOracle } from './bridge-shell.js';

/** Opens a conversation's shell (its bridge started) for a world and the oracle it shares with the model. */
export type OpenShell = (world: World, oracle: MutableOracle) => Promise<BridgeShell>;

export interface ShellRun {
  /** The case as played: the steps in the form the platform carried, the oracle as rewritten for it. */
  readonly played: Case;
  readonly failure?: string;
  /** What the conversation went through, as the model saw it, and the kinds of steps played. */
  readonly coverage: ReadonlySet<string>;
}

/** At most this many drain steps after the script (as run.ts). */
const DRAIN = 150;

/**
 * Platforms show `@name` for a mention whatever case it was written in (a mention becomes the user's id on the way
 * out): both sides' texts are compared with the names of the world in their own case.
 */
function normalise(observed: readonly Observed[], world: World): Observed[] {
  const names = new Map([...world.agents.map((a) => a.name), ...world.humans].map((n) => [n.toLowerCase(), n]));
  const text = (t: string) =>
    t.replace(/(^|[^\p{L}\p{N}_.@+-])@([\p{L}\p{N}_-]+)/gu, (whole, before: string, name: string) => {
      const known = names.get(name.toLowerCase());
      return known ? `${before}@${known}` : whole;
    });
  return observed.map((o) => (o.kind === 'post' ? { ...o, text: text(o.text) } : o));
}

function difference(model: readonly string[], shell: readonly string[]): string | undefined {
  for (let i = 0; i < Math.max(model.length, shell.length); i++) {
    if (model[i] !== shell[i]) return `model: ${model[i] ?? '(nothing)'}\nshell: ${shell[i] ?? '(nothing)'}`;
  }
  return undefined;
}

/** A step's kind as the coverage counts it (what the platform had to carry). */
function kindOf(step: Step): string {
  if (step.kind === 'say') {
    const where = step.room.startsWith('chat:dm-') ? ' in a DM' : '';
    return `say${where}${step.missed ? ' (missed)' : ''}${step.addressed ? ' (a reply to an agent)' : ''}`;
  }
  if (step.kind === 'command')
    return `command /${step.name}${step.args ? ' <arg>' : ''}${step.operator ? '' : ' (not an operator)'}`;
  if (step.kind === 'edit')
    return `edit${step.room.startsWith('chat:dm-') ? ' in a DM' : ''}${step.late ? ' (late)' : ''}`;
  return step.kind;
}

export async function runOnShell(c: Case, open: OpenShell): Promise<ShellRun> {
  const oracle = sharedOracle(c.oracle);
  const model = new ModelSystem(c.world, oracle);
  const steps: Step[] = [];
  const played = (): Case => ({ world: c.world, oracle, steps: [...steps] });
  const shell = await open(c.world, oracle);
  const names = { model: new Renamer(), shell: new Renamer() };
  const play = async (step: Step): Promise<string | undefined> => {
    const carried = await shell.prepare(step);
    if (!carried) return undefined;
    steps.push(carried);
    const at = `step ${steps.length} (${JSON.stringify(carried)})`;
    const expected = canonical(normalise(model.step(carried), c.world), names.model);
    let observed: string[];
    try {
      observed = canonical(normalise(await shell.step(carried), c.world), names.shell);
    } catch (error) {
      return `${at} failed on the shell: ${error instanceof Error ? error.message : String(error)}`;
    }
    const differs = difference(expected, observed);
    if (!differs) return undefined;
    const both = `the model observed:\n  ${expected.join('\n  ')}\nthe shell observed:\n  ${observed.join('\n  ')}`;
    return `${at} differs:\n${differs}\n\n${both}`;
  };
  const result = (failure?: string): ShellRun => {
    const coverage = new Set([...model.rules.coverage, ...steps.map(kindOf), ...shell.coverage]);
    if (!failure) return { played: played(), coverage };
    const errors = shell.errors();
    const log = errors.length > 0 ? `\n\nthe bridge's warnings and errors:\n${errors.join('\n')}` : '';
    return {
      played: played(),
      coverage,
      failure: `${failure}${log}\n\nscript (as played):\n${formatCase(played())}`,
    };
  };
  try {
    for (const step of c.steps) {
      const failure = await play(step);
      if (failure) return result(failure);
    }
    for (let i = 0; i < DRAIN; i++) {
      const next = drainStep(model);
      if (!next) break;
      const failure = await play(next);
      if (failure) return result(failure);
    }
    return result();
  } finally {
    await shell.close();
  }
}

export interface ShellOutcome {
  readonly runs: number;
  readonly failure?: string;
  /** How many conversations went through each situation or played each kind of step. */
  readonly coverage: ReadonlyMap<string, number>;
}

/**
 * The property, as fast-check runs it on a fixed seed: a failure names the seed, the step and the shrunk script.
 * Shrinking replays whole conversations through a bridge, so it stops after `shrinkMs` with the smallest so far.
 */
export async function checkOnShell(params: {
  readonly arbitrary: fc.Arbitrary<Case>;
  readonly open: OpenShell;
  readonly seed: number;
  readonly runs: number;
  readonly shrinkMs?: number;
  /** How to play the stream again, before ` --seed S --runs N` (said with a failure). */
  readonly again?: string;
}): Promise<ShellOutcome> {
  let runs = 0;
  const coverage = new Map<string, number>();
  let last: string | undefined;
  let failedAt: number | undefined;
  const property = fc.asyncProperty(params.arbitrary, async (c) => {
    if (failedAt !== undefined && Date.now() - failedAt > (params.shrinkMs ?? 60_000)) return true;
    const run = await runOnShell(c, params.open);
    if (run.failure) {
      failedAt ??= Date.now();
      last = run.failure;
      return false;
    }
    if (failedAt === undefined) {
      runs += 1;
      for (const what of run.coverage) coverage.set(what, (coverage.get(what) ?? 0) + 1);
    }
    return true;
  });
  const details = await fc.check(property, { seed: params.seed, numRuns: params.runs });
  if (!details.failed || !last) return { runs, coverage };
  return {
    runs,
    coverage,
    failure: [
      `The bridge differs from the model (seed ${details.seed}, path ${details.counterexamplePath}, after ${details.numRuns} runs and ${details.numShrinks} shrinks).`,
      ...(params.again ? [`Again: ${params.again} --seed ${details.seed} --runs ${details.numRuns}`] : []),
      last,
    ].join('\n'),
  };
}

/** Where conversations are played: a platform's fakes, shared by the conversations of one stream. */
export interface Stage {
  readonly open: OpenShell;
  close(): Promise<void>;
}

/**
 * Several streams of conversations at once, each on a stage of its own and its own seed (`seed + i`): a bridge
 * spends most of a step waiting for sockets, so streams overlap well even on two busy cores. Coverage is summed; a
 * failure names its stream's seed.
 */
export async function checkInStreams(params: {
  readonly streams: number;
  readonly stage: () => Promise<Stage>;
  readonly arbitrary: fc.Arbitrary<Case>;
  readonly seed: number;
  readonly runs: number;
  readonly shrinkMs?: number;
  /** How to play a stream again, before ` --seed S --runs N` (said with a failure). */
  readonly again?: string;
}): Promise<ShellOutcome> {
  const stages = await Promise.all(Array.from({ length: params.streams }, () => params.stage()));
  try {
    const outcomes = await Promise.all(
      stages.map((stage, i) =>
        checkOnShell({
          arbitrary: params.arbitrary,
          open: stage.open,
          seed: params.seed + i,
          runs: Math.ceil(params.runs / params.streams),
          ...(params.shrinkMs !== undefined ? { shrinkMs: params.shrinkMs } : {}),
          ...(params.again ? { again: params.again } : {}),
        }),
      ),
    );
    const coverage = new Map<string, number>();
    for (const outcome of outcomes) {
      for (const [what, n] of outcome.coverage) coverage.set(what, (coverage.get(what) ?? 0) + n);
    }
    const failure = outcomes.find((o) => o.failure)?.failure;
    return { runs: outcomes.reduce((sum, o) => sum + o.runs, 0), coverage, ...(failure ? { failure } : {}) };
  } finally {
    await Promise.all(stages.map((stage) => stage.close()));
  }
}
