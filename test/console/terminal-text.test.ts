import { describe, expect, it } from 'vitest';
import { safeForTerminal } from '../../adapters/console/terminal-text.js';

describe('text from agents and tools, made safe for the terminal', () => {
  it('removes CSI sequences: colours, cursor moves, erases, mode changes', () => {
    expect(safeForTerminal('\x1b[31mred\x1b[0m \x1b[2J\x1b[H\x1b[10;5Hhere\x1b[?25l\x1b[?1049h')).toBe('red here');
    expect(safeForTerminal('a\x9b2Jb')).toBe('ab');
  });

  it('removes OSC, DCS and APC strings with their payload, terminated by BEL or ST', () => {
    expect(safeForTerminal('a\x1b]0;my evil title\x07b')).toBe('ab');
    expect(safeForTerminal('a\x1b]52;c;ZXZpbA==\x1b\\b')).toBe('ab'); // clipboard write
    expect(safeForTerminal('a\x1b]8;;http://x.test\x1b\\link\x1b]8;;\x1b\\b')).toBe('alinkb');
    expect(safeForTerminal('a\x1bP1$r q\x1b\\b\x1b_apc\x1b\\c')).toBe('abc');
  });

  it('removes other escape sequences, lone ESC and unterminated introducers', () => {
    expect(safeForTerminal('a\x1bcb\x1b7c\x1b(Bd\x1b')).toBe('abcd');
    expect(safeForTerminal('a\x1b]0;no end')).toBe('a0;no end');
  });

  it('keeps newlines and tabs, turns CRLF into LF, drops other control characters', () => {
    expect(safeForTerminal('a\tb\r\nc\rd\x07\x08e\x00f\x7fg\x85h')).toBe('a\tb\ncdefgh');
  });

  it('leaves plain and non-ASCII text as it is', () => {
    const text = 'ünïcödé — 日本語 🎉 [brackets] ~tilde^caret';
    expect(safeForTerminal(text)).toBe(text);
  });
});
