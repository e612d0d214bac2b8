import { describe, expect, it } from 'vitest';
import { splitMessage } from '../../adapters/slack/split.js';

describe('splitMessage', () => {
  it('keeps a short message whole and drops an empty one', () => {
    expect(splitMessage('hello')).toEqual(['hello']);
    expect(splitMessage('  \n ')).toEqual([]);
  });

  it('splits on line boundaries under the limit', () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i} ${'x'.repeat(10)}`);
    const chunks = splitMessage(lines.join('\n'), 60);
    expect(chunks.every((c) => c.length <= 60)).toBe(true);
    expect(chunks.join('\n')).toBe(lines.join('\n'));
    expect(chunks.length).toBeGreaterThan(1);
  });

  it('closes a code fence at a cut and reopens it in the next chunk', () => {
    const code = Array.from({ length: 12 }, (_, i) => `console.log(${i});`);
    const text = ['Here:', '```js', ...code, '```', 'Done.'].join('\n');
    const chunks = splitMessage(text, 120);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(120);
      const fences = chunk.split('\n').filter((l) => l.startsWith('```')).length;
      expect(fences % 2).toBe(0);
    }
    expect(chunks[1]?.startsWith('```js\n')).toBe(true);
    const rejoined = chunks
      .join('\n')
      .split('\n')
      .filter((l) => !l.startsWith('```'));
    expect(rejoined).toEqual(['Here:', ...code, 'Done.']);
  });

  it('cuts a single line longer than the limit', () => {
    const chunks = splitMessage('a'.repeat(250), 100);
    expect(chunks).toEqual(['a'.repeat(100), 'a'.repeat(100), 'a'.repeat(50)]);
  });

  it('cuts an over-long line inside a fence and keeps every chunk a valid fence', () => {
    const text = `\`\`\`\n${'b'.repeat(300)}\n\`\`\``;
    const chunks = splitMessage(text, 100);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(100);
      expect(chunk.startsWith('```\n')).toBe(true);
      expect(chunk.endsWith('\n```')).toBe(true);
    }
    expect(chunks.map((c) => c.slice(4, -4)).join('')).toBe('b'.repeat(300));
  });

  it('splits a reply of about 9000 characters into three chunks under 4000', () => {
    const paragraph = `${'word '.repeat(59)}end`;
    const text = Array.from({ length: 30 }, () => paragraph).join('\n\n');
    const chunks = splitMessage(text);
    expect(chunks).toHaveLength(3);
    expect(chunks.every((c) => c.length <= 4000)).toBe(true);
  });
});
