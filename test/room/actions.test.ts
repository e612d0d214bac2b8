/** Rule 5.1 and the rooms an action may post in: an agent's action arrives as the agent wrote it, and the room checks it. */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { Effect } from '../../src/room/effects.js';
import type { Action, RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup } from '../../src/room/state.js';

const setup = (kind: RoomSetup['kind']): RoomSetup => ({
  key: kind === 'room' ? 'chat:main' : 'chat:dm-pm-alice',
  agents: [
    { name: 'pm', activation: 'mention' },
    { name: 'Data', activation: 'mention' },
  ],
  turnLimit: 20,
  kind,
  ...(kind === 'direct' ? { directAgent: 'pm' } : {}),
  privacy: 'off',
  requestTimeoutMs: 600_000,
  editWindowMs: 120_000,
  maxToolRounds: 8,
  batching: false,
});

const post = (requestReply: string[], roomsOnly = false): Action => ({
  kind: 'post',
  call: 'c1',
  from: { agent: 'pm', room: 'chat:side', ask: 1, requests: [], people: ['alice'], audience: null },
  text: 'what are the totals?',
  requestReply,
  ...(roomsOnly ? { roomsOnly: true } : {}),
});

function act(kind: RoomSetup['kind'], action: Action): { effects: readonly Effect[] } {
  const event: RoomEvent = { type: 'action', now: 1, action };
  return decide(setup(kind), EMPTY_STATE, event, { nextRequestId: 7 });
}

describe("an agent's action, checked by the room it acts on", () => {
  it('awaits each participant once, in configured spelling, never the requester; other names are humans', () => {
    const { effects } = act('room', post(['data', 'DATA', 'PM', 'alice', 'Alice']));
    const posted = effects.find((e): e is Extract<Effect, { type: 'post' }> => e.type === 'post');
    expect(posted?.post.open?.awaited).toEqual([
      { name: 'Data', kind: 'agent' },
      { name: 'alice', kind: 'human' },
    ]);
  });

  it('refuses send_channel_message into a DM or a private chat, and posts nothing there', () => {
    for (const kind of ['direct', 'pair'] as const) {
      const { effects } = act(kind, post([], true));
      expect(effects.filter((e) => e.type === 'post')).toEqual([]);
      expect(effects).toContainEqual({ type: 'action-result', call: 'c1', result: { kind: 'private-room' } });
    }
    // send_dm and chat post there.
    expect(act('direct', post([])).effects.some((e) => e.type === 'post')).toBe(true);
    expect(act('room', post([], true)).effects.some((e) => e.type === 'post')).toBe(true);
  });
});
