import { describe, expect, it } from 'vitest';
import { DISCORD_MESSAGE_LIMIT, splitMessage } from '../../adapters/discord/split.js';

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Every chunk fits, keeps surrogate pairs whole, and has balanced fences. */
function expectValid(chunks: string[], limit = DISCORD_MESSAGE_LIMIT): void {
  for (const chunk of chunks) {
    expect(chunk.length).toBeLessThanOrEqual(limit);
    expect(chunk.trim()).not.toBe('');
    expect(isHigh(chunk.charCodeAt(chunk.length - 1))).toBe(false);
    expect(isLow(chunk.charCodeAt(0))).toBe(false);
    const fences = chunk.split('\n').filter((line) => /^\s*```/.test(line));
    expect(fences.length % 2).toBe(0);
  }
}

describe('splitMessage', () => {
  it('keeps a short message whole and drops an empty one', () => {
    expect(splitMessage('hello')).toEqual(['hello']);
    expect(splitMessage('   ')).toEqual([]);
  });

  it('cuts on line boundaries and loses no line', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    const chunks = splitMessage(lines.join('\n'));
    expect(chunks.length).toBeGreaterThan(1);
    expectValid(chunks);
    expect(chunks.join('\n')).toBe(lines.join('\n'));
  });

  it('closes an open code fence at the cut and reopens it with its language', () => {
    const code = Array.from({ length: 120 }, (_, i) => `console.log(${i}); // ${'y'.repeat(10)}`);
    const text = `Here is the file:\n\`\`\`ts\n${code.join('\n')}\n\`\`\`\nDone.`;
    expect(text.length).toBeGreaterThan(3000);
    const chunks = splitMessage(text);
    expect(chunks).toHaveLength(2);
    expectValid(chunks);
    expect(chunks[0]?.endsWith('\n```')).toBe(true);
    expect(chunks[1]?.startsWith('```ts\n')).toBe(true);
    expect(chunks[1]?.endsWith('```\nDone.')).toBe(true);
    // Removing the added fences gives back the original lines.
    const rejoined = `${chunks[0]?.slice(0, -4)}\n${chunks[1]?.slice('```ts\n'.length)}`;
    expect(rejoined).toBe(text);
  });

  it('never separates a surrogate pair when a line must be cut', () => {
    const text = '😀'.repeat(3000); // 6000 UTF-16 units, no spaces, no newlines
    const chunks = splitMessage(text);
    expectValid(chunks);
    expect(chunks.join('')).toBe(text);
    const odd = `a${'😀'.repeat(1500)}`; // the pair straddles every even cut
    const oddChunks = splitMessage(odd);
    expectValid(oddChunks);
    expect(oddChunks.join('')).toBe(odd);
  });

  it('cuts an overlong line at a space where one is near the limit', () => {
    const words = Array.from({ length: 800 }, (_, i) => `w${i}`).join(' ');
    const chunks = splitMessage(words);
    expectValid(chunks);
    expect(chunks.every((chunk) => !chunk.startsWith('w') || /^w\d+/.test(chunk))).toBe(true);
    expect(chunks.join('')).toBe(words);
  });

  it('cuts an overlong line inside a code block and keeps every chunk fenced', () => {
    const text = `\`\`\`\n${'z'.repeat(5000)}\n\`\`\``;
    const chunks = splitMessage(text);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expectValid(chunks);
    for (const chunk of chunks) {
      expect(chunk.startsWith('```')).toBe(true);
      expect(chunk.endsWith('```')).toBe(true);
    }
    expect(chunks.join('').replaceAll('`', '').replaceAll('\n', '')).toBe('z'.repeat(5000));
  });

  it('respects a smaller limit', () => {
    const chunks = splitMessage('a\nbb\nccc\ndddd\neeeee', 7);
    expectValid(chunks, 7);
    expect(chunks).toEqual(['a\nbb', 'ccc', 'dddd', 'eeeee']);
  });
});
