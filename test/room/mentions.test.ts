import { describe, expect, it } from 'vitest';
import { stripCode } from '../../src/room/text/code-spans.js';
import { extractMentions, mentionTokens } from '../../src/room/text/mentions.js';

const agents = ['data', 'code', 'reviewer', 'lead_writer', 'character-dev'];

describe('mentions', () => {
  it('finds @name mentions case-insensitively, in configured spelling and first-mention order', () => {
    expect(extractMentions('@CODE please, then @Data', agents)).toEqual(['code', 'data']);
  });

  it('finds names in any script, as agent names allow', () => {
    const names = ['José', 'данные', '数据', 'agent_2'];
    expect(extractMentions('@josé and @ДАННЫЕ, then @数据: @agent_2.', names)).toEqual([
      'José',
      'данные',
      '数据',
      'agent_2',
    ]);
    expect(extractMentions('mail josé@josé.example', names)).toEqual([]);
  });

  it('lists each agent once', () => {
    expect(extractMentions('@code @code @Code', agents)).toEqual(['code']);
  });

  it('accepts names with underscores and hyphens and stops at punctuation', () => {
    expect(extractMentions('ask @lead_writer, @character-dev. and @code: now', agents)).toEqual([
      'lead_writer',
      'character-dev',
      'code',
    ]);
  });

  it('ignores @@x, a bare @ and unknown names', () => {
    expect(extractMentions('@@code and @ and @nobody', agents)).toEqual([]);
  });

  it('ignores the speaker mentioning itself', () => {
    expect(extractMentions('@code here, asking @data', agents, 'code')).toEqual(['data']);
  });

  it('does not treat e-mail addresses as mentions', () => {
    expect(extractMentions('write to code@example.com or data@data.org', agents)).toEqual([]);
  });

  it('ignores mentions inside fenced code blocks and inline code', () => {
    const text = 'see `@code` and\n```\n@data run this\n```\nthen @reviewer';
    expect(extractMentions(text, agents)).toEqual(['reviewer']);
  });

  it('treats an unclosed fence as code to the end', () => {
    expect(extractMentions('look:\n```\n@code\n@data', agents)).toEqual([]);
  });

  it('does not match a longer name that starts with an agent name', () => {
    expect(extractMentions('@coder and @datas', agents)).toEqual([]);
  });

  it('strips code but keeps the surrounding text', () => {
    expect(stripCode('a `b` c')).toBe('a   c');
    expect(mentionTokens('(@code) [@data]')).toEqual(['code', 'data']);
  });
});
