import { describe, expect, it } from 'vitest';
import { mentionedUserIds, slackToPlain } from '../../adapters/slack/inbound-text.js';
import { parseRoom, roomId, roomOfMessage } from '../../adapters/slack/rooms.js';

const names: Record<string, string> = { U0CODE: 'code', U0ALICE: 'Alice_Smith' };
const nameOf = (id: string) => names[id];

describe('slackToPlain', () => {
  it('turns bot and human mentions into @name', () => {
    expect(slackToPlain('<@U0CODE> hi, ask <@U0ALICE|alice>', nameOf)).toBe('@code hi, ask @Alice_Smith');
    expect(slackToPlain('<@U0OTHER|Bob Jones> and <@U0GONE>', nameOf)).toBe('@Bob_Jones and @U0GONE');
  });

  it('unescapes entities after converting markup', () => {
    expect(slackToPlain('a &lt; b &amp;&amp; c &gt; d', nameOf)).toBe('a < b && c > d');
    expect(slackToPlain('&lt;@U0CODE&gt; is text', nameOf)).toBe('<@U0CODE> is text');
  });

  it('converts links, channels and broadcasts', () => {
    expect(slackToPlain('<https://x.test/a|the page> <https://x.test/b> <mailto:a@b.c|a@b.c>', nameOf)).toBe(
      'the page (https://x.test/a) https://x.test/b a@b.c',
    );
    expect(slackToPlain('<#C123|general> <!here> <!channel>', nameOf)).toBe('#general @here @channel');
  });

  it('lists mentioned user ids once', () => {
    expect(mentionedUserIds('<@U1> <@U2|x> <@U1>')).toEqual(['U1', 'U2']);
  });
});

describe('rooms', () => {
  it('round-trips channel and thread', () => {
    expect(parseRoom(roomId('C1', '1.5'))).toEqual({ channel: 'C1', threadTs: '1.5' });
    expect(parseRoom('D9')).toEqual({ channel: 'D9', threadTs: undefined });
  });

  it('puts a thread reply in its thread and a top-level channel message in a new thread when replying in threads', () => {
    const base = { channel: 'C1', ts: '2.0', threadTs: undefined, isDm: false, byOurAgent: false };
    expect(roomOfMessage({ ...base, threadTs: '1.0' }, true)).toBe('C1/1.0');
    expect(roomOfMessage(base, true)).toBe('C1/2.0');
    expect(roomOfMessage(base, false)).toBe('C1');
    expect(roomOfMessage({ ...base, isDm: true }, true)).toBe('C1');
    expect(roomOfMessage({ ...base, byOurAgent: true }, true)).toBe('C1');
  });
});
