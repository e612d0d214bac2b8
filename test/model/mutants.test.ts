/**
 * The conformance check bites: played against machines that each break one rule (mutants.ts, and one here that
 * reads "[pass]." as a message), the same generated conversations must fail, each within the default runs.
 */
import { describe, expect, it, vi } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { Decide } from './machine.js';
import {
  anyHumanApproves,
  approvesByName,
  dropsOthersQuestions,
  forgetsAnswers,
  ignoresActivation,
  keepsWaiting,
  keepsWaitingPosts,
  lineResetsCount,
  neverParks,
  outsiderResetsCount,
  wakesQuoted,
} from './mutants.js';
import { check } from './property.js';

const SEED = 20_261_126;
const RUNS = 2_000;

/** While set (inside the wrapped decide only), the reply reader takes "[pass]." for a message. */
const reading = vi.hoisted(() => ({ passDotIsMessage: false }));
vi.mock('../../src/room/text/replies.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/room/text/replies.js')>();
  return {
    ...real,
    classifyReply: (reply: string) =>
      reading.passDotIsMessage && /^\[pass\]\.$/i.test(reply.trim())
        ? { kind: 'message' as const, text: reply.trim() }
        : real.classifyReply(reply),
  };
});

/** Rule 3.1 broken: "[pass]." is posted as a message. */
const passDotIsMessage: Decide = (...args) => {
  reading.passDotIsMessage = true;
  try {
    return decide(...args);
  } finally {
    reading.passDotIsMessage = false;
  }
};

const MUTANTS: ReadonlyArray<readonly [string, Decide]> = [
  ['asks every agent as an observer, whatever its activation', ignoresActivation],
  ['forgets who answered a request', forgetsAnswers],
  ['resets the count of agent messages on a bridge line', lineResetsCount],
  ["lets a human's newer message drop other humans' questions", dropsOthersQuestions],
  ['wakes an agent mentioned on a quoted line', wakesQuoted],
  ['keeps waiting for a human who has answered', keepsWaiting],
  ['posts "[pass]." as a message', passDotIsMessage],
  ['keeps a waiting reply that /pass or /reset dropped', keepsWaitingPosts],
  ["lets an outsider's message start the count of agent messages again", outsiderResetsCount],
  ['lets any human answer an approval card', anyHumanApproves],
  ["lets a namesake of a card's human answer it", approvesByName],
  ["keeps the room while a turn waits for its card (other humans' questions wait behind it)", neverParks],
];

describe('the conformance check', () => {
  it('passes the real machine on the same conversations', () => {
    const outcome = check({ seed: SEED, runs: 200, shrink: false });
    expect(outcome.failure).toBeUndefined();
  }, 60_000);

  it.each([
    ['forgets who answered a request', forgetsAnswers],
    ['resets the count of agent messages on a bridge line', lineResetsCount],
    ["lets a human's newer message drop other humans' questions", dropsOthersQuestions],
    ["lets an outsider's message start the count of agent messages again", outsiderResetsCount],
    ['lets any human answer an approval card', anyHumanApproves],
    ["lets a namesake of a card's human answer it", approvesByName],
  ] as const)(
    'catches, by the invariants alone, a machine that %s',
    (_, mutant) => {
      const outcome = check({ seed: SEED, runs: RUNS, shrink: false }, { decide: mutant, compare: false });
      expect(outcome.failure).toContain('the machine broke a rule');
    },
    120_000,
  );

  it.each(MUTANTS)(
    'catches a machine that %s',
    (_, mutant) => {
      const outcome = check({ seed: SEED, runs: RUNS, shrink: false }, { decide: mutant });
      expect(outcome.failure, 'the mutant passed every conversation').toBeDefined();
      expect(outcome.runs).toBeLessThan(RUNS);
      console.log(
        `MUTANT ${_}: caught after ${outcome.runs + 1} conversations\n${outcome.failure?.split('\n').slice(0, 4).join('\n')}`,
      );
    },
    120_000,
  );
});
