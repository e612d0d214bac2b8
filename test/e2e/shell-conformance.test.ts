/**
 * The generated conversations of test/model played end to end through a real bridge (createBridge, a SQLite store,
 * the `openai` SDK against the fake model server) on the fake Discord, each world agent its own bot: after every step
 * the bridge must have done what the model of the rules says (shell/run-shell.ts compares them). A failure names the
 * seed, the step and the shrunk script; once understood, keep it in shell/examples.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscordStage } from './shell/discord-shell.js';
import { SHELL_EXAMPLES } from './shell/examples.js';
import { PLATFORMS } from './shell/platforms.js';
import { checkInStreams, runOnShell } from './shell/run-shell.js';

/** Fixed, so every `npm test` plays the same conversations; shell-fuzz.ts explores from other seeds. */
const SEED = 20_261_203;
const RUNS = 200;
/** Conversations played at once, each stream on a fake Discord of its own. */
const STREAMS = 4;

/** What the conversations must have carried through Discord, each in at least one of them. */
const CARRIED = [
  'say',
  'say in a DM',
  'say (missed)',
  'caught-up',
  'a message in a channel fetched by a catch-up',
  'edit',
  'edit (late)',
  'edit in a DM',
  'an edit that woke someone',
  'command /pass',
  'command /pass <arg>',
  'command /reset',
  'command /privacy <arg>',
  'command /status',
  'command /pass (not an operator)',
  'a post the platform refused',
  'restart',
  'a restart with a turn in flight',
  'deadline',
  'a deadline that fired on an open request',
  'a stopped turn that ended at its delivery',
  'a failed model call',
  'an answer with no text',
  'a turn out of tool rounds',
  'an action here',
  'an action in the other channel',
  'a DM by an action',
  'an action awaiting replies',
  'a nested request',
  'privacy on with a private exchange',
  'the turn limit reached',
  'two humans interleaved',
];

/** What the kept conversations carried (they count toward CARRIED with the generated ones). */
const keptCoverage = new Set<string>();

describe('the bridge on Discord against the model', () => {
  describe('kept conversations', () => {
    let stage: DiscordStage;
    beforeAll(async () => {
      stage = await DiscordStage.start();
    });
    afterAll(() => stage?.close());

    it.each(SHELL_EXAMPLES.map((e) => [e.name, e] as const))(
      '%s',
      async (_, example) => {
        const run = await runOnShell(example.case, stage.open);
        if (run.failure) expect.fail(run.failure);
        for (const what of run.coverage) keptCoverage.add(what);
      },
      120_000,
    );
  });

  it(`agrees with the model on ${RUNS} generated conversations played through the fake Discord`, async () => {
    const outcome = await checkInStreams({
      ...PLATFORMS.discord,
      seed: SEED,
      runs: RUNS,
      streams: STREAMS,
      again: 'npx tsx test/e2e/shell-fuzz.ts --platform discord --streams 1',
    });
    if (outcome.failure) expect.fail(outcome.failure);
    expect(outcome.runs).toBe(RUNS);
    const missing = CARRIED.filter((what) => !outcome.coverage.has(what) && !keptCoverage.has(what));
    expect(missing, 'what no conversation carried').toEqual([]);
  }, 600_000);
});
