import { afterEach, describe, expect, it } from 'vitest';
import { LlmError } from '../../src/errors.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { ask, useFakeServer } from './client-fixture.js';

const note = '\n\n[cut off: the model reached its output limit]';

describe('answers that stop early', () => {
  const server = useFakeServer();

  for (const stream of [false, true]) {
    it(`returns a cut-off answer (finish_reason "length") with a visible note (stream: ${stream})`, async () => {
      server.fake.script('m', { content: 'The three reasons are: first, the', finishReason: 'length' });
      const response = await server.client({ stream }).complete(ask());
      expect(response.content).toBe(`The three reasons are: first, the${note}`);
      expect(response.finishReason).toBe('length');
    });
  }

  it('retries a stream that ends with no finish reason and no [DONE], then fails it', async () => {
    server.fake.script(
      'm',
      { content: 'A long answer that never ends', breakOffAfter: 3 },
      { content: 'A long answer that never ends', breakOffAfter: 3 },
    );
    const error = await server
      .client({ stream: true, maxRetries: 1 })
      .complete(ask())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).message).toBe("the model's answer broke off before it was complete");
    expect(server.fake.requests).toHaveLength(2);
  });

  it('retries a stream whose connection drops, and returns the next whole answer', async () => {
    server.fake.script('m', { content: 'half of it', dropConnectionAfter: 2 }, { content: 'all of it' });
    const response = await server.client({ stream: true, maxRetries: 1 }).complete(ask());
    expect(response.content).toBe('all of it');
    expect(server.fake.requests).toHaveLength(2);
  });

  it('accepts a stream that has its finish reason but no [DONE]', async () => {
    // Every chunk, the one with finish_reason "stop" included, and no usage chunk after it.
    server.fake.script('m', { content: 'done enough', breakOffAfter: 5 });
    const response = await server.client({ stream: true }).complete(ask());
    expect(response).toMatchObject({ content: 'done enough', finishReason: 'stop' });
  });

  for (const stream of [false, true]) {
    it(`returns a refusal as the reply (stream: ${stream})`, async () => {
      server.fake.script('m', { refusal: "I'm sorry, I can't help with that." });
      const response = await server.client({ stream }).complete(ask());
      expect(response.content).toBe("I'm sorry, I can't help with that.");
    });
  }
});

describe('in a room', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.close());

  it('never posts a broken-off stream as the answer', async () => {
    h = await startHarness({ agents: [{ name: 'code' }], env: { LLM_STREAM: 'true' } });
    h.llm.script('code', { content: 'I will now explain everything in detail', breakOffAfter: 4 });
    await h.adapter.say('@code explain');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      "[system]: @code could not answer: the model's answer broke off before it was complete",
    ]);
  });

  it('posts a cut-off answer with its note', async () => {
    h = await startHarness({ agents: [{ name: 'code' }] });
    h.llm.script('code', { content: 'Step 1: open the', finishReason: 'length' });
    await h.adapter.say('@code steps?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([`[@code]: Step 1: open the${note}`]);
  });
});
