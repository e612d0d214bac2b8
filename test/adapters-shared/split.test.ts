import { describe, expect, it } from 'vitest';
import { DISCORD_MESSAGE_LIMIT } from '../../adapters/discord/index.js';
import { splitMessage } from '../../adapters/shared/split.js';
import { SLACK_MESSAGE_LIMIT } from '../../adapters/slack/slack-adapter.js';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const charactersOf = (text: string) => [...graphemes.segment(text)].map((part) => part.segment);

/** Every chunk fits, is not blank, and has balanced fences; no user-perceived character is cut in two. */
function expectValid(text: string, chunks: string[], limit: number): void {
  const whole = new Set(charactersOf(text));
  for (const chunk of chunks) {
    expect(chunk.length).toBeLessThanOrEqual(limit);
    expect(chunk.trim()).not.toBe('');
    const broken = charactersOf(chunk).filter((character) => !whole.has(character) && !/^[`~\n]+$/.test(character));
    expect(broken).toEqual([]);
    const fences = chunk.split('\n').filter((line) => /^ {0,3}(```|~~~)/.test(line));
    expect(fences.length % 2).toBe(0);
  }
}

describe.each([
  ['Discord', DISCORD_MESSAGE_LIMIT],
  ['Slack', SLACK_MESSAGE_LIMIT],
])('splitMessage at the %s limit (%i)', (_platform, limit) => {
  it('keeps a short message whole and drops an empty one', () => {
    expect(splitMessage('hello', limit)).toEqual(['hello']);
    expect(splitMessage('  \n ', limit)).toEqual([]);
  });

  it('cuts on line boundaries and loses no line', () => {
    const lines = Array.from({ length: limit / 7 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    const chunks = splitMessage(lines.join('\n'), limit);
    expect(chunks.length).toBeGreaterThan(1);
    expectValid(lines.join('\n'), chunks, limit);
    expect(chunks.join('\n')).toBe(lines.join('\n'));
  });

  it('closes an open code fence at the cut and reopens it with its language', () => {
    const code = Array.from(
      { length: Math.ceil((limit * 1.5) / 30) },
      (_, i) => `console.log(${i}); // ${'y'.repeat(10)}`,
    );
    const text = `Here is the file:\n\`\`\`ts\n${code.join('\n')}\n\`\`\`\nDone.`;
    const chunks = splitMessage(text, limit);
    expect(chunks).toHaveLength(2);
    expectValid(text, chunks, limit);
    expect(chunks[0]?.endsWith('\n```')).toBe(true);
    expect(chunks[1]?.startsWith('```ts\n')).toBe(true);
    expect(chunks[1]?.endsWith('```\nDone.')).toBe(true);
    // Removing the added fences gives back the original lines.
    const rejoined = `${chunks[0]?.slice(0, -4)}\n${chunks[1]?.slice('```ts\n'.length)}`;
    expect(rejoined).toBe(text);
  });

  it('never cuts a surrogate pair in half when a line of emoji must be cut', () => {
    const text = '😀'.repeat(limit * 1.5); // no spaces, no newlines
    const chunks = splitMessage(text, limit);
    expectValid(text, chunks, limit);
    expect(chunks.join('')).toBe(text);
    const odd = `a${'😀'.repeat(limit)}`; // the pair straddles every even cut
    const oddChunks = splitMessage(odd, limit);
    expectValid(odd, oddChunks, limit);
    expect(oddChunks.join('')).toBe(odd);
  });

  it('keeps emoji sequences, flags and accented letters whole', () => {
    const family = '👩‍👩‍👧‍👦'; // four people joined by zero-width joiners: 11 UTF-16 units
    const pieces = [family, '🇫🇷', '👍🏽', 'e\u0301'];
    for (const piece of pieces) {
      const text = `b${piece.repeat(Math.ceil((limit * 2) / piece.length))}`;
      const chunks = splitMessage(text, limit);
      expectValid(text, chunks, limit);
      expect(chunks.join('')).toBe(text);
    }
  });

  it('cuts an overlong line at a space where one is near the limit', () => {
    const words = Array.from({ length: limit / 2.5 }, (_, i) => `w${i}`).join(' ');
    const chunks = splitMessage(words, limit);
    expect(chunks.length).toBeGreaterThan(1);
    expectValid(words, chunks, limit);
    for (const chunk of chunks.slice(1)) expect(chunk).toMatch(/^ w\d+/);
    expect(chunks.join('')).toBe(words);
  });

  it('cuts an overlong line inside a code block and keeps every chunk fenced', () => {
    const text = `\`\`\`\n${'z'.repeat(limit * 2.5)}\n\`\`\``;
    const chunks = splitMessage(text, limit);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expectValid(text, chunks, limit);
    for (const chunk of chunks) {
      expect(chunk.startsWith('```\n')).toBe(true);
      expect(chunk.endsWith('\n```')).toBe(true);
    }
    expect(chunks.map((chunk) => chunk.slice(4, -4)).join('')).toBe('z'.repeat(limit * 2.5));
  });
});

describe('splitMessage at small limits', () => {
  it('packs lines up to the limit', () => {
    expect(splitMessage('a\nbb\nccc\ndddd\neeeee', 7)).toEqual(['a\nbb', 'ccc', 'dddd', 'eeeee']);
  });

  it('cuts a line without spaces hard at the limit', () => {
    expect(splitMessage('a'.repeat(250), 100)).toEqual(['a'.repeat(100), 'a'.repeat(100), 'a'.repeat(50)]);
  });

  it('splits a reply of about 9000 characters into three Slack messages', () => {
    const paragraph = `${'word '.repeat(59)}end`;
    const text = Array.from({ length: 30 }, () => paragraph).join('\n\n');
    const chunks = splitMessage(text, SLACK_MESSAGE_LIMIT);
    expect(chunks).toHaveLength(3);
    expect(chunks.join('\n')).toBe(text);
  });

  it('refuses a limit that leaves no room beside the fence lines', () => {
    expect(() => splitMessage(`\`\`\`\n${'b'.repeat(20)}\n\`\`\``, 4)).toThrow(/no room beside the fence/);
  });
});
