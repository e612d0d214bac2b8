import { describe, expect, it } from 'vitest';
import { interruptedLine, resumeNote, tooOftenCutLine } from '../../src/room/recovery.js';

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

  it('names a call whose input was never recorded by its tool, never as an empty string', () => {
    const unknown = [{ tool: 'bash', input: null, status: 'started' as const }];
    expect(interruptedLine('code', unknown)).toBe(
      "@code's turn was cut by a restart after 1 tool call (bash); bash may have run only in part. " +
        'It continues now, and nothing that already ran is run again.',
    );
    expect(resumeNote(unknown)).toContain('- bash (cut while running: it may have run in part)');
  });

  it('says when a turn is given up', () => {
    expect(tooOftenCutLine('code', 3)).toBe(
      "@code's turn was cut by 3 restarts and is not tried again. Mention @code to ask again.",
    );
  });
});
