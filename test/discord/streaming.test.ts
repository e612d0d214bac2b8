import { afterEach, describe, expect, it } from 'vitest';
import { DISCORD_MESSAGE_LIMIT } from '../../adapters/discord/index.js';
import { splitMessage } from '../../adapters/shared/split.js';
import type { FakeMessage, RecordedRequest } from '../fakes/discord/index.js';
import { history } from '../helpers/store-views.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

let h: DiscordHarness;
/** Lets a paused bash command finish (a failed test must not leave the bridge waiting on it). */
let releaseExec: () => void = () => {};
afterEach(async () => {
  releaseExec();
  await h?.close();
});

const STREAMING = { DISCORD_STREAM: 'edit', LLM_STREAM: 'true' };

/** Polls a condition that fakes on the other side of a socket make true (bounded by the test timeout). */
async function eventually(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** The message requests (create, edit, delete) a bot made in a channel. */
function messageRequests(bot: string, channel: string, method: string): RecordedRequest[] {
  const id = h.discord.bot(bot).id;
  const prefix = `/channels/${h.discord.channel(channel).id}/messages`;
  return h.discord.requests.filter((r) => r.botId === id && r.method === method && r.path.startsWith(prefix));
}

async function storedAgentMessages(): Promise<string[]> {
  return (await history(h.store, 'discord', h.discord.channel('general').id, 50))
    .filter((message) => message.kind === 'agent')
    .map((message) => message.content);
}

/**
 * @code says `first`, runs a bash command that waits for the returned release, then replies `reply`:
 * the streamed message is on screen, with `first`, while the command runs.
 */
function scriptToolPause(first: string, reply: string): () => void {
  let release: () => void = () => {};
  h.sandbox.onExec(
    () =>
      new Promise((resolve) => {
        release = () => resolve({ output: 'a.csv\nb.csv\n', exitCode: 0 });
      }),
  );
  releaseExec = () => release();
  h.llm.script(
    'code',
    { content: first, toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] },
    { content: reply },
  );
  return () => release();
}

/** The streamed message once it shows `text` (the first create, or the trailing edit after the throttle). */
async function partialOnScreen(text: string): Promise<FakeMessage> {
  await eventually(
    () => h.sandbox.calls.length === 1 && h.discord.botMessages('general').some((m) => m.content === text),
  );
  const [partial] = h.discord.botMessages('general');
  if (!partial) throw new Error('no streamed message');
  return partial;
}

describe('Discord streaming by edits (DISCORD_STREAM=edit)', () => {
  it('posts a streamed reply once, edits it to the final text, and stores it as one message', async () => {
    h = await startDiscordHarness({
      agents: [{ name: 'code', activation: 'mention', tools: ['bash'] }],
      env: STREAMING,
    });
    const reply =
      'There are two files here, a.csv and b.csv. Both hold the quarterly numbers for each region, ' +
      'one row per month, and the totals at the bottom of each file match the report we sent last week.';
    const first = 'Let me look at the files first, one moment.';
    const release = scriptToolPause(first, reply);
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('code-bot').id}> what is there?`);

    // Created with the first words, then brought up to date by one trailing edit when the second is over.
    const partial = await partialOnScreen(first);
    expect(h.discord.botMessages('general')).toHaveLength(1);
    expect(partial.pinged).toEqual([]);
    release();
    await h.discord.until(() => h.discord.botMessages('general')[0]?.content === reply);
    await h.settle(asked.id);
    await h.settle(partial.id);

    expect(h.discord.botMessages('general').map((m) => m.id)).toEqual([partial.id]);
    expect(partial.edits.at(-1)).toBe(reply);
    expect(messageRequests('code-bot', 'general', 'POST')).toHaveLength(1);
    // The reply arrived in dozens of pieces; the message changed only a few times (at most one edit a second).
    const deltas = reply.match(/\s*\S{1,4}|\s+$/g)?.length ?? 0;
    const edits = messageRequests('code-bot', 'general', 'PATCH');
    expect(deltas).toBeGreaterThan(40);
    expect(edits.length).toBeGreaterThanOrEqual(1);
    expect(edits.length).toBeLessThanOrEqual(4);
    for (const request of [...messageRequests('code-bot', 'general', 'POST'), ...edits]) {
      expect(request.body).toMatchObject({ allowed_mentions: { parse: [] } });
    }
    expect(await storedAgentMessages()).toEqual([reply]);
    expect(h.adapter.received.filter((event) => event.author.kind === 'agent')).toHaveLength(1);
  });

  it('replaces a streamed reply that mentions someone with a fresh post that pings, deleting the partial', async () => {
    h = await startDiscordHarness({
      agents: [{ name: 'code', activation: 'mention', tools: ['bash'] }],
      env: STREAMING,
    });
    const carol = h.discord.human('carol');
    const first = 'Checking the numbers now, one moment.';
    const release = scriptToolPause(
      first,
      'All the numbers add up, I checked each quarter twice. @carol the summary is in report.md.',
    );
    const asked = h.discord.humanSays('general', carol, `<@${h.discord.bot('code-bot').id}> check the numbers`);

    const partial = await partialOnScreen(first);
    expect(partial.pinged).toEqual([]);
    release();
    await h.discord.until(() => h.discord.world.deleted.length === 1 && h.discord.botMessages('general').length === 1);
    const [final] = h.discord.botMessages('general');
    if (!final) throw new Error('no final message');
    await h.settle(asked.id);
    await h.settle(final.id);

    expect(h.discord.world.deleted.map((m) => m.id)).toEqual([partial.id]);
    expect(final.id).not.toBe(partial.id);
    expect(final.content).toBe(
      `All the numbers add up, I checked each quarter twice. <@${carol.id}> the summary is in report.md.`,
    );
    expect(final.pinged).toEqual([carol.id]);
    expect(await storedAgentMessages()).toEqual([
      'All the numbers add up, I checked each quarter twice. @carol the summary is in report.md.',
    ]);
    // The partial's echo never reached the bridge.
    expect(h.adapter.received.map((event) => event.messageId)).not.toContain(partial.id);
  });

  it('shows nothing for a [pass]', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'mention' }], env: STREAMING });
    h.llm.script('code', { content: '[pass]' });
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('code-bot').id}> anything?`);
    await h.settle(asked.id);
    await eventually(() => h.llm.requests.length === 1);
    await h.bridge.idle();

    expect(h.llm.requests[0]?.stream).toBe(true);
    expect(h.discord.botMessages('general')).toEqual([]);
    for (const method of ['POST', 'PATCH', 'DELETE'])
      expect(messageRequests('code-bot', 'general', method)).toEqual([]);
    expect(await storedAgentMessages()).toEqual([]);
  });

  it('deletes the partial reply when an operator uses /pass mid-stream', async () => {
    h = await startDiscordHarness({
      agents: [{ name: 'code', activation: 'mention', tools: ['bash'] }],
      env: STREAMING,
      operators: ['alice'],
    });
    const first = 'Let me look at the files first, one moment.';
    const release = scriptToolPause(first, 'never shown');
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('code-bot').id}> what is there?`);
    const partial = await partialOnScreen(first);

    const passed = await h.discord.slash('code-bot', 'alice', 'general', 'pass');
    expect(passed).toMatchObject({ content: 'Control is with the humans (1 agent turn stopped).', ephemeral: true });
    release();
    await h.discord.until(() => h.discord.world.deleted.length === 1);
    await h.settle(asked.id);

    expect(h.discord.world.deleted.map((m) => m.id)).toEqual([partial.id]);
    expect(h.discord.botMessages('general')).toEqual([]);
    expect(await storedAgentMessages()).toEqual([]);
    expect(h.adapter.received.map((event) => event.messageId)).not.toContain(partial.id);
  });

  it('ends a streamed reply over 2000 characters as valid chunks, the first being the streamed message', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'mention' }], env: STREAMING });
    const code = Array.from({ length: 118 }, (_, i) => `print(${i})  # ${'x'.repeat(15)}`).join('\n');
    const reply = `Here is the script:\n\`\`\`python\n${code}\n\`\`\`\nRun it please.`;
    expect(reply.length).toBeGreaterThan(3000);
    h.llm.script('code', { content: reply });
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('code-bot').id}> write it`);
    await h.discord.until(() => h.discord.botMessages('general').length === 2);
    await h.settle(asked.id);
    const messages = h.discord.botMessages('general');
    for (const message of messages) await h.settle(message.id);

    expect(messages.map((m) => m.content)).toEqual(splitMessage(reply, DISCORD_MESSAGE_LIMIT));
    for (const chunk of messages.map((m) => m.content)) {
      expect(chunk.split('\n').filter((line) => line.startsWith('```')).length % 2).toBe(0);
    }
    const posts = messageRequests('code-bot', 'general', 'POST');
    const sent = [...posts, ...messageRequests('code-bot', 'general', 'PATCH')];
    expect(sent.every((r) => String((r.body as { content?: string }).content).length <= 2000)).toBe(true);
    // Two creates: the streamed first chunk (edited into its final form), then the rest.
    expect(posts).toHaveLength(2);
    expect(messages[0]?.edits.at(-1)).toBe(splitMessage(reply, DISCORD_MESSAGE_LIMIT)[0]);
    expect(await storedAgentMessages()).toEqual([reply]);
  });

  it('posts replies whole, without asking the model to stream, when DISCORD_STREAM is off', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'mention' }] });
    const reply = 'A reply long enough to be streamed, were streaming on for this platform.';
    h.llm.script('code', { content: reply });
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('code-bot').id}> hello`);
    await h.discord.until(() => h.discord.botMessages('general').length === 1);
    await h.settle(asked.id);

    expect(h.discord.botMessages('general').map((m) => m.content)).toEqual([reply]);
    expect(h.llm.requests[0]?.stream).toBeFalsy();
    expect(messageRequests('code-bot', 'general', 'PATCH')).toEqual([]);
    expect(messageRequests('code-bot', 'general', 'POST')[0]?.body).toMatchObject({
      allowed_mentions: { parse: ['users'] },
    });
  });
});
