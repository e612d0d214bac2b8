import { afterEach, describe, expect, it } from 'vitest';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import { captureLogger } from '../helpers/harness.js';

let h: DiscordHarness | undefined;
afterEach(async () => h?.close());

describe('a store that fails to write at run time', () => {
  it('says in the room that a message was not saved, and logs the error, instead of dropping it quietly', async () => {
    const { logger, lines } = captureLogger();
    h = await startDiscordHarness({ agents: [{ name: 'data', activation: 'always' }], logger });
    h.llm.respond(() => ({ content: 'answered' }));
    // SQLite's own read-only switch: every write fails as it does on a database this user may not write.
    h.store.db.pragma('query_only = ON');
    const harness = h;
    const said = harness.discord.humanSays('general', 'alice', 'how many rows?');
    await harness.discord.until(() => harness.discord.botMessages('general').length > 0);
    await harness.settle(said.id);

    expect(harness.discord.botMessages('general').map((m) => m.content)).toEqual([
      "A message from Alice could not be saved, so no agent will see it (attempt to write a readonly database). The bridge's log has the details.",
    ]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'a message could not be stored; no agent will see it',
        platform: 'discord',
        id: said.id,
      }),
    );
    expect(harness.llm.requests).toHaveLength(0);
  });
});
