import { describe, expect, it } from 'vitest';
import { audienceOf, canSee, privacyMode, seeingAlike, shownAt, visibleTo } from '../../src/room/privacy.js';

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

describe('where an agent may be shown what it did or learnt elsewhere (recent actions, knowledge)', () => {
  const dm = { room: 'discord:dm-bob', audience: null };
  const room = { room: 'discord:general', audience: null };
  const bobs = { room: 'discord:general', audience: ['bob', 'code'] };

  it("shows a room's public doings anywhere in that room, and nowhere else", () => {
    expect(shownAt(room, room)).toBe(true);
    expect(shownAt(room, bobs)).toBe(true);
    expect(shownAt(room, { room: 'discord:other', audience: null })).toBe(false);
  });

  it("shows a DM's doings only in that DM", () => {
    expect(shownAt(dm, dm)).toBe(true);
    expect(shownAt(dm, room)).toBe(false);
    expect(shownAt(dm, bobs)).toBe(false);
  });

  it("shows a private exchange's doings only where everyone who sees the turn was in it, case-insensitively", () => {
    expect(shownAt(bobs, { room: 'discord:general', audience: ['Code', 'BOB'] })).toBe(true);
    expect(shownAt(bobs, { room: 'discord:general', audience: ['code'] })).toBe(true);
    expect(shownAt(bobs, room)).toBe(false);
    expect(shownAt(bobs, { room: 'discord:general', audience: ['alice', 'code'] })).toBe(false);
    expect(shownAt(bobs, { room: 'discord:general', audience: ['bob', 'code', 'data'] })).toBe(false);
    expect(shownAt(bobs, { room: 'discord:dm-bob', audience: ['bob', 'code'] })).toBe(false);
  });

  it('lets only agents that see the same messages share a batched call (rule 14.1), in their order', () => {
    const messages = [
      { id: 1, audience: null },
      { id: 2, audience: ['ann', 'code'] },
      { id: 3, audience: null },
    ];
    const seats = ['data', 'code', 'ops', 'Code2', 'CODE'].map((agent, seat) => ({ agent, seat }));
    const groups = seeingAlike(seats, (s) => s.agent, messages);
    // data, ops and Code2 see messages 1 and 3; code (any case) sees 2 as well.
    expect(groups.map((g) => g.map((s) => s.seat))).toEqual([
      [0, 2, 3],
      [1, 4],
    ]);
    // Without privacy everyone sees alike: one group.
    const open = messages.map((m) => ({ ...m, audience: null }));
    expect(seeingAlike(seats, (s) => s.agent, open)).toHaveLength(1);
    expect(seeingAlike([], (s: { agent: string }) => s.agent, messages)).toEqual([]);
  });
});
