/**
 * The generated conversations of worlds with one human, played end to end through a real bridge in the terminal
 * room (the real console adapter, typed at a terminal): after every step the bridge must have done what the model of
 * the rules says. Steps the terminal room has no way to make (another room, DMs, edits, refused posts, catch-ups)
 * are not played.
 */
import { describe, expect, it } from 'vitest';
import { PLATFORMS } from './shell/platforms.js';
import { checkInStreams } from './shell/run-shell.js';

const SEED = 20_261_204;
const RUNS = 50;
const STREAMS = 2;

const CARRIED = [
  'say',
  'command /pass',
  'command /pass <arg>',
  'restart',
  'deadline',
  'a failed model call',
  'a turn out of tool rounds',
  'an action here',
  'the turn limit reached',
];

describe('the bridge in the terminal room against the model', () => {
  it(`agrees with the model on ${RUNS} generated conversations typed at the terminal`, async () => {
    const outcome = await checkInStreams({
      ...PLATFORMS.console,
      seed: SEED,
      runs: RUNS,
      streams: STREAMS,
      again: 'npx tsx test/e2e/shell-fuzz.ts --platform console --streams 1',
    });
    if (outcome.failure) expect.fail(outcome.failure);
    expect(outcome.runs).toBe(RUNS);
    const missing = CARRIED.filter((what) => !outcome.coverage.has(what));
    expect(missing, 'what no conversation carried').toEqual([]);
  }, 300_000);
});
