/**
 * A turn cut by the store failing for a moment (a dropped database connection) is taken again, not failed: the room
 * is answered once, with no "could not answer" line. A store that keeps failing still fails the turn, after a few tries.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';

let h: DiscordHarness;
afterEach(async () => h?.close());

async function start(failures: number): Promise<void> {
  h = await startDiscordHarness({ agents: [{ name: 'data', activation: 'mention', control: true }] });
  h.llm.respond(() => ({ content: 'the answer' }));
  const chats = h.store.chats;
  // A turn reads the agent's private chat requests from the store at its start (its briefing).
  const involving = chats.involving.bind(chats);
  let left = failures;
  chats.involving = async (agent) => {
    if (left-- > 0) {
      const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
      throw left % 2 === 0 ? reset : new StoreError('read ECONNRESET', { cause: reset, retryable: true });
    }
    return involving(agent);
  };
}

const texts = () => h.discord.botMessages('general').map((m) => m.content);

describe('a turn cut by the store failing for a moment', () => {
  it('is taken again and answers once', async () => {
    await start(2);
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('data-bot').id}> hello?`);
    await h.discord.until(() => texts().includes('the answer'));
    await h.settle(asked.id);
    expect(texts()).toEqual(['the answer']);
    expect(h.llm.requests).toHaveLength(1);
  }, 30_000);

  it('still fails, with one line, when the store keeps failing', async () => {
    await start(100);
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('data-bot').id}> hello?`);
    await h.discord.until(() => texts().some((t) => t.includes('could not answer')));
    await h.settle(asked.id);
    expect(texts()).toEqual([`<@${h.discord.bot('data-bot').id}> could not answer: read ECONNRESET`]);
  }, 30_000);
});
