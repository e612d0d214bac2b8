import { countTokens as countWhole } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import {
  APPROXIMATION_MARGIN,
  countMessage,
  countRequest,
  countTools,
  encodingFor,
  MESSAGE_OVERHEAD,
  REQUEST_OVERHEAD,
  tokenCounter,
} from '../../src/llm/tokens.js';

describe('token counting', () => {
  it('picks o200k for the GPT-4o generation on and cl100k for GPT-4 and 3.5', () => {
    for (const model of [
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-5',
      'o1-mini',
      'o3',
      'o4-mini',
      'openai/gpt-4o',
      'gpt-oss-20b',
    ]) {
      expect(encodingFor(model), model).toEqual({ encoding: 'o200k_base', exact: true });
    }
    for (const model of ['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo', 'text-embedding-3-small']) {
      expect(encodingFor(model), model).toEqual({ encoding: 'cl100k_base', exact: true });
    }
  });

  it('approximates unknown models with cl100k and a safety margin', () => {
    for (const model of ['llama3.1:8b', 'qwen2.5-coder', 'mistral-small', 'o1x', 'deepseek-chat']) {
      expect(encodingFor(model), model).toEqual({ encoding: 'cl100k_base', exact: false });
    }
    const text = 'The quarterly numbers are in: revenue grew by 12 percent, costs by 3.';
    const exact = tokenCounter('gpt-4').count(text);
    expect(tokenCounter('llama3').count(text)).toBe(Math.ceil(exact * APPROXIMATION_MARGIN));
  });

  it('counts real BPE tokens, not characters', () => {
    const counter = tokenCounter('gpt-4o');
    expect(counter.count('hello world')).toBe(2);
    expect(counter.count('')).toBe(0);
    // 200 repetitions of one common word: far fewer tokens than the chars/4 estimate of 300.
    expect(counter.count('hello '.repeat(200))).toBeLessThan(250);
  });

  it('counts special-token text as plain text instead of throwing', () => {
    const counter = tokenCounter('gpt-4o');
    expect(counter.count('before <|endoftext|> after')).toBeGreaterThan(3);
  });

  it('gives the same count for a long text the second time (cached)', () => {
    const counter = tokenCounter('gpt-4o-mini');
    const long = 'lorem ipsum dolor sit amet '.repeat(500);
    const first = counter.count(long);
    expect(counter.count(long)).toBe(first);
    expect(first).toBeGreaterThan(1000);
  });

  it('counts a request: messages with their overhead, tool calls, and the tool schemas', () => {
    const counter = tokenCounter('gpt-4o');
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'bash', description: 'Run a command.', parameters: { type: 'object', properties: {} } },
      },
    ];
    const messages = [
      { role: 'system' as const, content: 'rules' },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function' as const, function: { name: 'bash', arguments: '{"command":"ls"}' } },
        ],
      },
    ];
    const system = countMessage(counter, messages[0] as (typeof messages)[0]);
    expect(system).toBe(MESSAGE_OVERHEAD + counter.count('rules'));
    const call = countMessage(counter, messages[1] as (typeof messages)[1]);
    expect(call).toBeGreaterThan(MESSAGE_OVERHEAD + 3);
    expect(countRequest(counter, messages, tools)).toBe(REQUEST_OVERHEAD + system + call + countTools(counter, tools));
    expect(countTools(counter, [])).toBe(0);
  });
});

describe('token counting on hostile input', () => {
  it('counts 200 KB without a single space quickly (BPE is quadratic in a word, so words are counted in pieces)', () => {
    const counter = tokenCounter('gpt-4o');
    const started = Date.now();
    const tokens = counter.count('x'.repeat(200_000));
    // Whole, this takes over a minute; in pieces, milliseconds. The bound is generous for a busy machine.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(tokens).toBeGreaterThan(200_000 / 16);
  });

  it('counts ordinary prose in pieces exactly as whole', () => {
    const counter = tokenCounter('gpt-4o');
    const prose = 'The quick brown fox jumps over the lazy dog; numbers 12345 and code() {} '.repeat(300);
    expect(prose.length).toBeGreaterThan(10_000);
    expect(counter.count(prose)).toBe(countWhole(prose, { disallowedSpecial: new Set() }));
  });

  it("counts a text that comes again on every turn (the bridge's rules, a card) once", () => {
    const counter = tokenCounter('gpt-4o') as ReturnType<typeof tokenCounter> & { tokenized: number };
    const rules = `You are an agent in a shared chat room. ${'Mention someone with @name. '.repeat(20)}${Math.random()}`;
    const before = counter.tokenized;
    const first = counter.count(rules);
    for (let turn = 0; turn < 10; turn++) expect(counter.count(rules)).toBe(first);
    expect(counter.tokenized - before).toBe(1);
    expect(first).toBe(countWhole(rules));
  });
});
