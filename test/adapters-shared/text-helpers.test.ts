import { describe, expect, it } from 'vitest';
import { mentionName } from '../../adapters/shared/mention-name.js';
import { withShared } from '../../adapters/shared/quote.js';
import { SeenIds } from '../../adapters/shared/seen-ids.js';
import { closesFence, fenceMarker, mapProse, segments } from '../../src/room/text/code-spans.js';

describe('code spans', () => {
  it('separates prose, fences and inline code, and joins back to the input', () => {
    const text = 'see `x` here\n```js\nconst a = `b`;\n```\nafter';
    const parts = segments(text);
    expect(parts.map((p) => p.kind)).toEqual(['text', 'code', 'text', 'fence', 'text']);
    expect(parts.map((p) => p.value).join('')).toBe(text);
  });

  it('runs an unclosed fence to the end', () => {
    expect(segments('a\n```\ncode')).toEqual([
      { kind: 'text', value: 'a\n' },
      { kind: 'fence', value: '```\ncode' },
    ]);
  });

  it('closes a fence only with the same character, at least as long, alone on its line', () => {
    expect(fenceMarker('   ````ts')).toBe('````');
    expect(fenceMarker('    ```')).toBeUndefined(); // four spaces: indented code, not a fence
    expect(closesFence('````', '```')).toBe(true);
    expect(closesFence('```', '````')).toBe(false);
    expect(closesFence('~~~', '```')).toBe(false);
    expect(closesFence('``` js', '```')).toBe(false);
  });

  it('converts prose only', () => {
    const text = 'a @x `@x`\n~~~\n@x\n~~~\n@x';
    expect(mapProse(text, (prose) => prose.replaceAll('@x', 'X'))).toBe('a X `@x`\n~~~\n@x\n~~~\nX');
  });
});

describe('mention names', () => {
  it('turns whitespace in a display name into underscores', () => {
    expect(mentionName('  Ada  Lovelace ')).toBe('Ada_Lovelace');
    expect(mentionName('José\tNúñez')).toBe('José_Núñez');
  });

  it('drops control and invisible characters, so a bidi override cannot show a name reversed', () => {
    expect(mentionName('\u202Eevil\u202C-name')).toBe('evil-name');
    expect(mentionName('zero\u200Bwidth\nline')).toBe('zerowidth_line');
  });
});

describe('seen ids', () => {
  it('says whether an id is new, and forgets the oldest beyond its capacity', () => {
    const seen = new SeenIds(2);
    expect(seen.add('a')).toBe(true);
    expect(seen.add('a')).toBe(false);
    seen.add('b');
    seen.add('c');
    expect(seen.has('a')).toBe(false);
    expect(seen.has('b') && seen.has('c')).toBe(true);
  });
});

describe('shared messages', () => {
  it('quotes each shared text under the comment, with its author when known', () => {
    expect(withShared('look', [{ author: 'Bob', text: 'line one\nline two' }, { text: 'another' }])).toBe(
      'look\n> Bob: line one\n> line two\n> another',
    );
    expect(withShared('', [{ text: 'only the share' }, { text: '  ' }])).toBe('> only the share');
  });

  it('takes the @ off mentions in the quote, leaving addresses and code alone', () => {
    expect(withShared('@code see', [{ text: '@data do it, mail a@b.c, `@code`' }])).toBe(
      '@code see\n> data do it, mail a@b.c, `@code`',
    );
  });
});
