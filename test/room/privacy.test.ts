import { describe, expect, it } from 'vitest';
import { audienceOf, canSee, privacyMode, visibleTo } from '../../src/room/privacy.js';

describe('privacy (mentions mode)', () => {
  it('makes a message that mentions agents visible to its author and those agents only', () => {
    expect(audienceOf({ mode: 'mentions', kind: 'human', author: 'ann', mentions: ['code'] })).toEqual(['ann', 'code']);
    expect(audienceOf({ mode: 'mentions', kind: 'human', author: 'ann', mentions: [] })).toBeNull();
    expect(audienceOf({ mode: 'off', kind: 'human', author: 'ann', mentions: ['code'] })).toBeNull();
  });

  it('keeps a reply to a private message inside the same participants (and those it names)', () => {
    expect(
      audienceOf({ mode: 'mentions', kind: 'agent', author: 'code', mentions: [], replyAudience: ['ann', 'code'] }),
    ).toEqual(['ann', 'code']);
    expect(
      audienceOf({
        mode: 'mentions',
        kind: 'agent',
        author: 'code',
        mentions: ['data'],
        replyAudience: ['ann', 'code'],
      }),
    ).toEqual(['ann', 'code', 'data']);
  });

  it('leaves system messages public', () => {
    expect(audienceOf({ mode: 'mentions', kind: 'system', author: 'system', mentions: ['code'] })).toBeNull();
  });

  it('answers who may see what, case-insensitively', () => {
    const secret = { audience: ['ann', 'Code'] };
    expect(canSee('code', secret)).toBe(true);
    expect(canSee('data', secret)).toBe(false);
    expect(canSee('data', { audience: null })).toBe(true);
    expect(visibleTo('data', [secret, { audience: null }])).toEqual([{ audience: null }]);
  });

  it("lets an operator's stored choice win over the configuration", () => {
    expect(privacyMode(null, 'mentions')).toBe('mentions');
    expect(privacyMode('off', 'mentions')).toBe('off');
    expect(privacyMode('mentions', 'off')).toBe('mentions');
  });
});
