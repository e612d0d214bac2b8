import { describe, expect, it } from 'vitest';
import { classifyReply, isPass, shownWhileWriting, worldPassText } from '../../src/room/text/replies.js';
import { handBackText } from '../../src/room/turns.js';

describe('what a reply means', () => {
  it('reads [pass] (trimmed, any case) and an empty reply as a pass', () => {
    expect(classifyReply('  [pass] \n')).toEqual({ kind: 'pass' });
    expect(classifyReply('[PASS]')).toEqual({ kind: 'pass' });
    expect(classifyReply('')).toEqual({ kind: 'pass' });
  });

  it('reads [pass] with punctuation, code quotes or a short remark as a pass', () => {
    for (const reply of [
      '[pass].',
      '`[pass]`',
      '"[pass]"',
      '[PASS] nothing to add',
      '[pass] — nothing from me.',
      '**[pass]**',
    ]) {
      expect(isPass(reply), reply).toBe(true);
    }
  });

  it('posts a reply that merely mentions [pass], or a long one that starts with it', () => {
    expect(classifyReply('I would [pass] on that')).toEqual({ kind: 'message', text: 'I would [pass] on that' });
    const long = '[pass] but first: the numbers in row 4 are wrong, the totals do not add up, and the chart is off';
    expect(classifyReply(long).kind).toBe('message');
    expect(classifyReply('[pass]\nActually, one thing: row 4 is wrong.').kind).toBe('message');
  });

  it('keeps the reply without the <world>pass</world> tag', () => {
    expect(classifyReply('Revenue is up 4%. <world>pass</world>')).toEqual({
      kind: 'world-pass',
      text: 'Revenue is up 4%.',
    });
    expect(classifyReply('<world> PASS </world>')).toEqual({ kind: 'world-pass', text: '' });
    expect(classifyReply('[pass] <world>pass</world>')).toEqual({ kind: 'world-pass', text: '' });
    expect(worldPassText('code')).toBe('@human code is passing control to you');
  });

  it("hands back when the reply's only code span is exactly the tag, as models write it", () => {
    expect(classifyReply('All done. `<world>pass</world>`')).toEqual({ kind: 'world-pass', text: 'All done.' });
    expect(classifyReply('`<world>pass</world>`')).toEqual({ kind: 'world-pass', text: '' });
  });

  it('keeps the tag literal inside a fenced block or beside other code', () => {
    const fenced = 'To hand back, end with:\n```\n<world>pass</world>\n```';
    expect(classifyReply(fenced)).toEqual({ kind: 'message', text: fenced });
    expect(classifyReply('Run `ls`, then write `<world>pass</world>`.').kind).toBe('message');
  });

  it('says the turn limit in the hand-back line', () => {
    expect(handBackText(20)).toMatch(/20 agent messages in a row.*control is back with you/);
  });
});

describe('what a reply still being written may show', () => {
  it('never shows a hand-back tag, whole or half written', () => {
    expect(shownWhileWriting('All done here. <world>pass</world>')).toBe('All done here.');
    expect(shownWhileWriting('All done here. <world>pass</w')).toBe('All done here.');
    expect(shownWhileWriting('All done here. <world>pa')).toBe('All done here.');
    expect(shownWhileWriting('All done here. <wor')).toBe('All done here.');
    expect(shownWhileWriting('All done here. <')).toBe('All done here.');
    expect(shownWhileWriting('a < b and c, as said')).toBe('a < b and c, as said');
  });

  it('shows nothing while the reply is, or may still become, a pass', () => {
    expect(shownWhileWriting('[pa')).toBe('');
    expect(shownWhileWriting('`[pass]`')).toBe('');
    expect(shownWhileWriting('[pass] nothing to add from me')).toBe('');
    expect(shownWhileWriting('Short')).toBe('');
  });

  it('shows a finished reply as the room posts it: the tag inside code is literal, a pass with a remark is a pass', () => {
    const replies = [
      'All answered, nothing left to do here. <world>pass</world>',
      'The tag to write is:\n```\n<world>pass</world>\n```',
      'The tag is `<world>pass</world>` and `[pass]` the other',
      'The tag, half written in a block:\n```\n<world>pa',
      '[pass] nothing to add from me',
      'Plain answer, long enough to show.',
    ];
    const posted = (reply: string) => {
      const outcome = classifyReply(reply);
      return outcome.kind === 'pass' ? '' : outcome.text;
    };
    expect(replies.map(shownWhileWriting)).toEqual(replies.map(posted));
  });
});
