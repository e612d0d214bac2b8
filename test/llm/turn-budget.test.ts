import { describe, expect, it } from 'vitest';
import { runAgentTurn } from '../../src/llm/agent-turn.js';
import { BudgetError } from '../../src/llm/budget.js';
import type { ChatCompletionMessageParam, LlmClient, LlmRequest, LlmResponse } from '../../src/llm/client.js';
import { countRequest, tokenCounter } from '../../src/llm/tokens.js';
import { TurnBudget } from '../../src/llm/turn-budget.js';
import { ok, type Tool } from '../../src/tools/tool.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { dataOf } from '../helpers/untrusted.js';

const counter = tokenCounter('gpt-4o');

/** A tool answering with `size` characters of text, like read_files on a big file. */
function bigTool(size: number): Tool {
  return {
    name: 'read_files',
    definition: {
      type: 'function',
      function: { name: 'read_files', description: 'Read files.', parameters: { type: 'object', properties: {} } },
    },
    run: async () => ok('read_files big.csv', `HEAD ${'row,value,42\n'.repeat(size / 13)} TAIL`),
  };
}

/** An in-process model that calls the tool `rounds` times, then answers; it records what it was sent. */
function scriptedClient(rounds: number): LlmClient & { requests: ChatCompletionMessageParam[][]; usage: number } {
  const requests: ChatCompletionMessageParam[][] = [];
  return {
    requests,
    usage: 0,
    async complete(request: LlmRequest): Promise<LlmResponse> {
      requests.push(request.messages.map((m) => ({ ...m })) as ChatCompletionMessageParam[]);
      const round = requests.length;
      const usage = { input: 100 * round, cached: 50, output: 7 };
      if (round > rounds) return { content: 'done', toolCalls: [], usage };
      return {
        content: '',
        toolCalls: [{ id: `c${round}`, name: 'read_files', arguments: '{"files":["big.csv"]}' }],
        usage,
      };
    },
  };
}

const context: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'rules and card' },
  { role: 'user', content: '[@user]: read big.csv please' },
  { role: 'user', content: '>>> SITUATION <<<\nasked' },
];

function toolContext() {
  return {
    agent: 'code',
    channelKey: 'test:room',
    sandbox: new FakeSandbox(),
    commandTimeoutMs: 1000,
    signal: new AbortController().signal,
  };
}

/** A turn over `context` with one tool, as the bridge runs it. */
const turnWith = (
  client: LlmClient,
  tool: Tool,
  options: { maxRounds: number; budget?: TurnBudget; onUsage?: (usage: { input: number }) => void },
) =>
  runAgentTurn({
    client,
    model: 'gpt-4o',
    messages: [...context],
    tools: [tool],
    toolContext: toolContext(),
    ...options,
  });

describe('a turn within its budget', () => {
  it('clips a huge tool result before it enters the messages, keeping its start and end', async () => {
    const tool = bigTool(500_000);
    const client = scriptedClient(1);
    const budget = new TurnBudget(counter, 6000, 1000, [tool.definition], context.length);
    const output = await turnWith(client, tool, { maxRounds: 5, budget });
    expect(output.text).toBe('done');
    const content = String(client.requests[1]?.find((m) => m.role === 'tool')?.content);
    expect(counter.count(content)).toBeLessThanOrEqual(1000);
    const result = dataOf(content);
    expect(result.startsWith('HEAD row,value,42')).toBe(true);
    expect(result.endsWith('TAIL')).toBe(true);
    expect(result).toMatch(/\[… \d+ characters cut …\]/);
    // The room still remembers the whole run.
    expect(output.toolRuns[0]?.output.length).toBeGreaterThan(400_000);
  });

  it('keeps every call of a long tool loop within the limit, shortening older rounds first', async () => {
    const tool = bigTool(20_000);
    const client = scriptedClient(6);
    const limit = 3000;
    const budget = new TurnBudget(counter, limit, 1200, [tool.definition], context.length);
    await turnWith(client, tool, { maxRounds: 10, budget });
    expect(client.requests).toHaveLength(7);
    for (const request of client.requests) {
      expect(countRequest(counter, request, [tool.definition])).toBeLessThanOrEqual(limit);
      expect(request.slice(0, 3)).toEqual(context);
    }
    // The newest result is still readable; an older one became a note.
    const last = client.requests.at(-1) ?? [];
    const results = last.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(results.at(-1)).toContain('HEAD row,value,42');
    expect(results[0]).toMatch(/^\[… \d+ characters cut …\]$/);
  });

  it("reports each call's usage", async () => {
    const client = scriptedClient(2);
    const seen: number[] = [];
    await turnWith(client, bigTool(100), { maxRounds: 5, onUsage: (usage) => seen.push(usage.input) });
    expect(seen).toEqual([100, 200, 300]);
  });

  it("counts the context once, as it was assembled: before each call only the turn's own exchanges are counted", async () => {
    const tool = bigTool(2_000);
    const counted: string[] = [];
    const spy = {
      ...counter,
      count: (text: string) => {
        counted.push(text);
        return counter.count(text);
      },
    };
    const contextTokens = countRequest(counter, context, [tool.definition]);
    const budget = new TurnBudget(spy, 6000, 1000, [tool.definition], context.length, contextTokens);
    const client = scriptedClient(2);
    await turnWith(client, tool, { maxRounds: 5, budget });
    expect(client.requests).toHaveLength(3);
    // Neither the context's messages nor the tool schemas are counted again at any call.
    for (const message of context) expect(counted).not.toContain(message.content);
    expect(counted).not.toContain(JSON.stringify([tool.definition]));
  });

  it("says so when not even the turn's newest exchange fits", () => {
    const budget = new TurnBudget(counter, 30, 1000, [], 1);
    const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: 'word '.repeat(100) }];
    expect(() => budget.fit(messages)).toThrow(BudgetError);
  });
});

describe('through the bridge', () => {
  it('no request exceeds the agent budget as counted, with long messages and a huge tool result', async () => {
    const { startHarness } = await import('../helpers/harness.js');
    const sandbox = new FakeSandbox();
    sandbox.onExec(() => ({ output: `BEGIN ${'0123456789 '.repeat(30_000)} END`, exitCode: 0 }));
    const h = await startHarness({
      agents: [{ name: 'code', model: 'gpt-4o', activation: 'mention', tools: ['bash'], contextTokens: 9000 }],
      sandbox,
    });
    try {
      h.llm.respond((request) =>
        request.messages.at(-1)?.role === 'tool'
          ? { content: 'done' }
          : { toolCalls: [{ name: 'bash', arguments: { command: 'cat big.log' } }] },
      );
      for (let i = 0; i < 6; i++) {
        await h.adapter.say(`@code look at this ${i}: ${'lorem ipsum dolor sit amet '.repeat(400)}`);
        await h.bridge.idle();
      }
      expect(h.llm.requests.length).toBe(12);
      const counter = tokenCounter('gpt-4o');
      for (const request of h.llm.requests) {
        const messages = request.messages as ChatCompletionMessageParam[];
        const tools = (request.tools ?? []) as Parameters<typeof countRequest>[2];
        expect(countRequest(counter, messages, tools)).toBeLessThanOrEqual(9000 - 4096);
      }
      const result = dataOf(h.llm.requests[1]?.messages.at(-1)?.content);
      expect(result.startsWith('BEGIN 0123456789')).toBe(true);
      expect(result.endsWith('END')).toBe(true);
    } finally {
      await h.close();
    }
  });
});
