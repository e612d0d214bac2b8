/**
 * Private chat requests as the shell carries them: each is the pair room's, decided there and written to the store
 * with that room's decision; its expiry is handed to the bridge's scheduler, so a test can say when it falls due.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Deadline } from '../../src/bridge/index.js';
import { agentOf, type Harness, situationOf, startHarness, toolResultsOf } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const tools = ['chat_request' as const, 'chat_response' as const, 'chat' as const];

/** Agents a and b with the chat tools, requests waiting 600 s, the bridge's clock and scheduler the test's. */
const startPair = (clock: { now: number }, scheduler: NonNullable<Parameters<typeof startHarness>[0]['scheduler']>) =>
  startHarness({
    agents: [
      { name: 'a', tools },
      { name: 'b', tools },
    ],
    env: { CHAT_REQUEST_TIMEOUT_S: '600' },
    clock: () => clock.now,
    scheduler,
  });

describe('a private chat request', () => {
  it("is the pair room's: its state and the store's row agree; it expires at the scheduler's word; its sender is told once", async () => {
    const clock = { now: 1_800_000_000_000 };
    const due: Array<Deadline & { fire: () => void }> = [];
    h = await startPair(clock, (deadline, fire) => {
      due.push({ ...deadline, fire });
      return () => {};
    });
    h.llm.respond((r) => {
      const asked = agentOf(r) === 'a' && /@a go/.test(JSON.stringify(r.messages));
      if (asked && toolResultsOf(r).length === 0 && !/Your chat request/.test(situationOf(r))) {
        return { toolCalls: [{ name: 'chat_request', arguments: { to: 'b', reason: 'numbers' } }] };
      }
      return { content: '[pass]' };
    });
    const made = clock.now;
    await h.adapter.say('@a go');
    await h.bridge.idle();
    const store = h.store;
    const pairState = async () => (await store.rooms.open('private', 'a+b')).state?.chats;
    const row = await store.chats.get(1);
    expect(row).toMatchObject({ from: 'a', to: 'b', status: 'pending', expiresAt: made + 600_000 });
    expect(await pairState()).toEqual([row]);
    expect(due.map(({ room, at }) => ({ room, at }))).toContainEqual({ room: 'private:a+b', at: made + 600_000 });

    clock.now = made + 600_000;
    for (const deadline of due.filter((d) => d.room === 'private:a+b')) deadline.fire();
    await h.bridge.idle();
    expect(await store.chats.get(1)).toMatchObject({ status: 'expired', senderTold: false });
    expect((await pairState())?.[0]?.status).toBe('expired');

    await h.adapter.say('@a go again');
    await h.adapter.say('@a and again');
    await h.bridge.idle();
    const told = h.llm.requests.filter(
      (r) => toolResultsOf(r).length === 0 && /Your chat request #1 to @b expired unanswered/.test(situationOf(r)),
    );
    expect(told).toHaveLength(1);
    expect(await store.chats.get(1)).toMatchObject({ status: 'expired', senderTold: true });
    // Each request the pair room holds is the store's row, as it stands (a's second turn asked again: #2).
    expect(await pairState()).toEqual(await store.chats.involving('a'));
  });

  it('past its time reads as expired before its timer comes, and only the pair room writes it so', async () => {
    const clock = { now: 1_800_000_000_000 };
    // The timer never comes (a bridge restarted meanwhile, say): the expiry is read by its time.
    h = await startPair(clock, () => () => {});
    h.store.chats.expire = async () => {
      throw new Error('only the pair room writes a chat request');
    };
    h.llm.respond((r) => {
      const first =
        agentOf(r) === 'a' && /@a go/.test(JSON.stringify(r.messages)) && !/again/.test(JSON.stringify(r.messages));
      if (first && toolResultsOf(r).length === 0) {
        return { toolCalls: [{ name: 'chat_request', arguments: { to: 'b', reason: 'numbers' } }] };
      }
      return { content: '[pass]' };
    });
    await h.adapter.say('@a go');
    await h.bridge.idle();
    const store = h.store;
    expect(await store.chats.get(1)).toMatchObject({ status: 'pending' });

    clock.now += 600_000;
    await h.adapter.say('@a again');
    await h.bridge.idle();
    const told = h.llm.requests.filter((r) => /Your chat request #1 to @b expired unanswered/.test(situationOf(r)));
    expect(told).toHaveLength(1);
    // The pair room, told the sender heard it, expired it first: its state and the row agree.
    expect(await store.chats.get(1)).toMatchObject({ status: 'expired', senderTold: true });
    expect((await store.rooms.open('private', 'a+b')).state?.chats).toEqual([await store.chats.get(1)]);
  });
});
