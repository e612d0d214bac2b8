/**
 * The machine (src/room's decide) against the executable model (test/model/model.ts) on generated conversations:
 * after every step both must observe the same, and the machine must keep the invariants (invariants.ts). A failure
 * names the seed, the step and the shrunk script; keep it in examples.ts once understood.
 */
import { describe, expect, it } from 'vitest';
import { check } from './property.js';

/** Fixed, so every `npm test` plays the same conversations; `npm run fuzz` explores from other seeds. */
const SEED = 20_261_126;
const RUNS = 10_000;
/** Besides, every run searches a little further: conversations from a seed of its own, printed to replay it. */
const FRESH_RUNS = 2_000;

/** What the generated conversations must go through, each in at least 1% of them. */
const SITUATIONS = [
  'two humans interleaved',
  'a nested request',
  'a deadline that fired on an open request',
  'the turn limit reached',
  'privacy on with a private exchange',
  'a restart with a turn in flight',
  'an operator command that stopped something',
  'an edit that woke someone',
  'a catch-up',
  'a reply that waited for the platform',
  'an operator dropped a reply that waited for the platform',
  "an outsider's message",
  "an outsider's message while the agents worked",
  "an outsider's message after a hand-back",
  'an edit refused by the access policy',
  'a human who may wake only some agents',
  'an approval card',
  'a card answered by its root',
  'a card answered by an operator',
  'someone else refused a card',
  'a card for a human carried through a request',
  'a card that expired',
  'a card denied by /pass',
  'a card denied by /reset',
  'a card waiting through a restart',
  'an approved call made again by the turn taken again',
  'a turn waiting for a card gave the room to another question',
  'a call denied while its turn was parked, made again',
];

describe('the machine against the model', () => {
  it('agrees with the model on 10,000 generated conversations and keeps every invariant', () => {
    const outcome = check({ seed: SEED, runs: RUNS });
    if (outcome.failure) expect.fail(outcome.failure);
    expect(outcome.runs).toBe(RUNS);
    const short = SITUATIONS.filter((what) => (outcome.coverage.get(what) ?? 0) < RUNS / 100).map(
      (what) => `${what}: ${outcome.coverage.get(what) ?? 0}`,
    );
    expect(short, 'situations the generator reached in fewer than 1% of the conversations').toEqual([]);
  }, 240_000);

  it('agrees with the model on 2,000 conversations from a new random seed', () => {
    const seed = (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
    console.log(`conformance: ${FRESH_RUNS} conversations from seed ${seed} (again: npm run fuzz -- --seed ${seed})`);
    const outcome = check({ seed, runs: FRESH_RUNS });
    if (outcome.failure) expect.fail(outcome.failure);
    expect(outcome.runs).toBe(FRESH_RUNS);
  }, 120_000);
});
