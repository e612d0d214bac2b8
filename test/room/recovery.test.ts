import { describe, expect, it } from 'vitest';
import {
  interruptedLine,
  type OpenWork,
  planRecovery,
  resumeNote,
  roundEnds,
  tooOftenCutLine,
} from '../../src/room/recovery.js';

const round = (id: number, trigger: OpenWork['trigger'], room = 'r'): OpenWork => ({
  id,
  room,
  kind: 'round',
  parentId: null,
  trigger,
});
const turn = (id: number, parentId: number | null, room = 'r'): OpenWork => ({ id, room, kind: 'turn', parentId });

describe('planRecovery', () => {
  const facts = { newestHuman: 10, control: 'agents' as const };

  it('resumes the round of the newest human message, and its turns with it', () => {
    expect(planRecovery([round(1, { kind: 'human', id: 10 }), turn(2, 1)], () => facts)).toEqual([
      { kind: 'resume-round', id: 1 },
    ]);
  });

  it('drops rounds a newer human message supersedes, and their turns', () => {
    const steps = planRecovery(
      [round(1, { kind: 'human', id: 4 }), turn(2, 1), round(3, { kind: 'human', id: 10 })],
      () => facts,
    );
    expect(steps).toEqual([
      { kind: 'drop', id: 1 },
      { kind: 'resume-round', id: 3 },
      { kind: 'drop', id: 2 },
    ]);
  });

  it('resumes agent talk after the newest human message, unless the humans hold control', () => {
    const work = [round(1, { kind: 'agent', id: 12 })];
    expect(planRecovery(work, () => facts)).toEqual([{ kind: 'resume-round', id: 1 }]);
    expect(planRecovery(work, () => ({ ...facts, control: 'humans' }))).toEqual([{ kind: 'drop', id: 1 }]);
  });

  it('drops a round whose message is gone, and judges each room by its own facts', () => {
    const steps = planRecovery(
      [round(1, { kind: 'missing', id: 3 }), round(2, { kind: 'human', id: 4 }, 'other')],
      (room) => (room === 'other' ? { newestHuman: 4, control: 'agents' } : facts),
    );
    expect(steps).toEqual([
      { kind: 'drop', id: 1 },
      { kind: 'resume-round', id: 2 },
    ]);
  });

  it('leaves turns outside rounds to the requests that ask for them', () => {
    expect(planRecovery([turn(5, null)], () => facts)).toEqual([]);
  });
});

describe('roundEnds', () => {
  it('ends a round at a hand-back, and when an agent that was not asked spoke', () => {
    expect(roundEnds('ended', true)).toBe(true);
    expect(roundEnds('posted', false)).toBe(true);
    expect(roundEnds('posted', true)).toBe(false);
    expect(roundEnds('passed', false)).toBe(false);
    expect(roundEnds('failed', false)).toBe(false);
  });
});

describe('what a resumed turn says', () => {
  const runs = [
    { tool: 'bash', input: 'make   test', status: 'ok' as const },
    { tool: 'write_files', input: '{"files":{"a.txt":"x"}}', status: 'started' as const },
  ];

  it('tells the room which tool calls ran, and which may have run only in part', () => {
    expect(interruptedLine('code', runs)).toBe(
      '@code\'s turn was cut by a restart after 2 tool calls (`make test`, write_files {"files":{"a.txt":"x"}}); ' +
        'write_files {"files":{"a.txt":"x"}} may have run only in part. It continues now, and nothing that already ran is run again.',
    );
  });

  it('tells the model its calls are answered from the record', () => {
    expect(resumeNote([])).toBe('Your previous attempt at this turn was cut by a restart before you replied.');
    expect(resumeNote(runs)).toContain('- `make test`\n- write_files');
    expect(resumeNote(runs)).toContain('(cut while running: it may have run in part)');
  });

  it('says when a turn is given up', () => {
    expect(tooOftenCutLine('code', 3)).toBe(
      "@code's turn was cut by 3 restarts and is not tried again. Mention @code to ask again.",
    );
  });
});
