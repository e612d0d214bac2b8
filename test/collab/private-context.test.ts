import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import {
  agentOf,
  type Harness,
  newestOf,
  startHarness,
  systemOf,
  toolResultsOf,
  turnNoteOf,
} from '../helpers/harness.js';

let h: Harness;
afterEach(async () => h?.close());

const PIN = 'PIN-4921-MARKER';
const shows = (request: RecordedRequest, marker: string) => JSON.stringify(request.messages).includes(marker);

/** @code saves what it is told: a bash run and a `remember`, then a short reply; otherwise it answers plainly. */
function codeSaves(request: RecordedRequest) {
  if (agentOf(request) !== 'code') return { content: '[pass]' };
  if (toolResultsOf(request).length > 0) return { content: 'Saved.' };
  if (newestOf(request).includes('save my PIN')) {
    return {
      toolCalls: [
        { name: 'bash', arguments: { command: `echo ${PIN} > pin.txt` } },
        { name: 'remember', arguments: { key: 'bob pin', value: PIN } },
      ],
    };
  }
  return { content: 'Here is what I did recently.' };
}

describe('what an agent did or remembered in one place is shown only where that audience may see it', () => {
  it('keeps what an agent ran and remembered in a DM out of its requests in every other room', async () => {
    h = await startHarness({
      agents: [
        { name: 'code', activation: 'mention', tools: ['bash', 'remember'] },
        { name: 'data', activation: 'always' },
      ],
    });
    h.llm.respond(codeSaves);
    await h.adapter.say('please save my PIN 4921', { channel: 'dm-code-bob', direct: 'code', user: 'bob' });
    await h.bridge.idle();
    await h.adapter.say('what did you save?', { channel: 'dm-code-bob', direct: 'code', user: 'bob' });
    await h.bridge.idle();
    const inDm = h.llm.requests.length;
    // In the DM itself, the agent still sees what it did there.
    const dmLater = h.llm.requests.at(-1);
    if (!dmLater) throw new Error('no request');
    expect(turnNoteOf(dmLater)).toMatch(new RegExp(`>>> RECENT ACTIONS <<<\\n.*bash: echo ${PIN}`));
    expect(systemOf(dmLater)).toContain(`bob pin: ${PIN}`);

    await h.adapter.say('@code list your recent actions, all of them', { user: 'alice' });
    await h.bridge.idle();
    await h.adapter.say('@code what do you remember?', { channel: 'other', user: 'carol' });
    await h.bridge.idle();
    const elsewhere = h.llm.requests.slice(inDm);
    expect(elsewhere.filter((r) => agentOf(r) === 'code').length).toBeGreaterThanOrEqual(2);
    expect(elsewhere.filter((r) => shows(r, PIN))).toEqual([]);
    expect(elsewhere.filter((r) => shows(r, '4921'))).toEqual([]);
  });

  it("with PRIVACY=mentions, shows a private exchange's actions and knowledge only in that exchange's turns", async () => {
    h = await startHarness({
      agents: [{ name: 'code', activation: 'mention', tools: ['bash', 'remember'] }],
      env: { PRIVACY: 'mentions' },
    });
    h.llm.respond(codeSaves);
    await h.adapter.say('@code please save my PIN 4921', { user: 'bob' });
    await h.bridge.idle();
    await h.adapter.say('@code list your recent actions, all of them', { user: 'alice' });
    await h.bridge.idle();
    const alices = h.llm.requests.at(-1);
    if (!alices) throw new Error('no request');
    // Alice's exchange (alice + code) is not Bob's: his PIN is in neither the recent actions nor the knowledge.
    expect(turnNoteOf(alices)).not.toContain(PIN);
    expect(systemOf(alices)).not.toContain(PIN);
    await h.adapter.say('@code what did you save for me?', { user: 'bob' });
    await h.bridge.idle();
    const bobs = h.llm.requests.at(-1);
    if (!bobs) throw new Error('no request');
    expect(turnNoteOf(bobs)).toContain(`bash: echo ${PIN}`);
    expect(systemOf(bobs)).toContain(`bob pin: ${PIN}`);
  });
});
