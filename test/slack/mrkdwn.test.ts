import { describe, expect, it } from 'vitest';
import { markdownToMrkdwn } from '../../adapters/slack/mrkdwn.js';

const ids: Record<string, string> = { code: 'U0CODE', data: 'U0DATA', alice_smith: 'U0ALICE' };
const mention = (name: string) => ids[name.toLowerCase()];

describe('markdownToMrkdwn', () => {
  it('converts bold, italic, strike and headings', () => {
    expect(markdownToMrkdwn('**bold** and *italic* and ~~gone~~')).toBe('*bold* and _italic_ and ~gone~');
    expect(markdownToMrkdwn('__also bold__ _stays italic_')).toBe('*also bold* _stays italic_');
    expect(markdownToMrkdwn('## Plan\ntext')).toBe('*Plan*\ntext');
  });

  it('converts links and keeps bare URLs intact', () => {
    expect(markdownToMrkdwn('[the docs](https://example.com/a_b?x=1&y=2)')).toBe(
      '<https://example.com/a_b?x=1&amp;y=2|the docs>',
    );
    expect(markdownToMrkdwn('see <https://example.com>')).toBe('see <https://example.com>');
    expect(markdownToMrkdwn('go to https://example.com/*star*/x.')).toBe('go to https://example.com/*star*/x.');
  });

  it('escapes &, < and > but keeps block quotes', () => {
    expect(markdownToMrkdwn('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(markdownToMrkdwn('> quoted <tag>')).toBe('> quoted &lt;tag&gt;');
  });

  it('turns list markers into bullets without reading them as italics', () => {
    expect(markdownToMrkdwn('* one\n* two *three*\n- four')).toBe('• one\n• two _three_\n• four');
  });

  it('drops the language tag of a fence and leaves code untouched except for escapes', () => {
    expect(markdownToMrkdwn('run:\n```bash\necho **hi** @code <x>\n```\ndone')).toBe(
      'run:\n```\necho **hi** @code &lt;x&gt;\n```\ndone',
    );
    expect(markdownToMrkdwn('`**not bold**` **bold**')).toBe('`**not bold**` *bold*');
  });

  it('closes an unclosed fence', () => {
    expect(markdownToMrkdwn('```py\nprint(1)')).toBe('```\nprint(1)\n```');
  });

  it('turns known @names into Slack mentions, outside code only', () => {
    expect(markdownToMrkdwn('@code please, and @Data too. @nobody', mention)).toBe(
      '<@U0CODE> please, and <@U0DATA> too. @nobody',
    );
    expect(markdownToMrkdwn('thanks @alice_smith.', mention)).toBe('thanks <@U0ALICE>.');
    expect(markdownToMrkdwn('mail x@code.org or `@code`', mention)).toBe('mail x@code.org or `@code`');
    expect(markdownToMrkdwn('**@code** look', mention)).toBe('*<@U0CODE>* look');
  });
});
