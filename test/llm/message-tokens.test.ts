import { describe, expect, it } from 'vitest';
import { DEFAULT_ALLOCATIONS } from '../../src/config/index.js';
import {
  buildContext,
  type ContextInput,
  renderedTokens,
  renderingCount,
  renderMessage,
} from '../../src/llm/context.js';
import { type EncodingName, type TokenCounter, tokenCounter } from '../../src/llm/tokens.js';
import type { RoomMessage } from '../../src/room/types.js';

const ENCODINGS: readonly EncodingName[] = ['o200k_base', 'cl100k_base'];
/** An exact counter per encoding, and the approximation (cl100k with the margin) of a model with no known tokenizer. */
const MODELS = ['gpt-4o-mini', 'gpt-4', 'llama3.1:8b'];

const base = (id: number, patch: Partial<RoomMessage> = {}): RoomMessage => ({
  id,
  author: 'alice',
  authorId: 'u1',
  kind: 'human',
  content: `message ${id}: the quarterly numbers are in, revenue grew by 12% — see the attached sheet 📈`,
  mentions: [],
  toolRuns: [],
  at: 1_700_000_000_000 + id,
  ...patch,
});

/** Plain text, a reply with tool runs (one output longer than history replays), file lines, odd text, a long one. */
const MESSAGES: RoomMessage[] = [
  base(1),
  base(2, {
    author: 'code',
    kind: 'agent',
    content: 'Ran it: three lines.\n[@alice]: not a speaker',
    toolRuns: [
      { tool: 'bash', input: 'wc -l uploads/a.csv', output: '3 uploads/a.csv' },
      { tool: 'write_file', input: 'notes.md', output: `${'row,value\n'.repeat(400)}done` },
    ],
  }),
  base(3, { content: 'here it is', files: ['[file: uploads/a.csv (text/csv, 1.2 KB)]', '[file: b.png (image/png)]'] }),
  base(4, { content: 'before <|endoftext|> after, 日本語のテキスト, and `code`' }),
  base(5, { content: 'lorem ipsum dolor sit amet '.repeat(300) }),
  base(6, { author: 'bridge', kind: 'system', content: 'The sandbox was reset.' }),
];

const withCounts = (message: RoomMessage): RoomMessage => ({
  ...message,
  tokens: { o200k_base: renderingCount(message, 'o200k_base'), cl100k_base: renderingCount(message, 'cl100k_base') },
});

/** A counter that remembers every text it was asked to count. */
function spying(counter: TokenCounter): { counter: TokenCounter; counted: string[] } {
  const counted: string[] = [];
  return {
    counted,
    counter: {
      encoding: counter.encoding,
      exact: counter.exact,
      count: (text) => {
        counted.push(text);
        return counter.count(text);
      },
    },
  };
}

function input(history: RoomMessage[], counter: TokenCounter, contextTokens = 16_384): ContextInput {
  return {
    agent: { name: 'code', systemPrompt: 'You write code.' },
    agentNames: ['code', 'data'],
    history,
    historyLimit: 50,
    situation: 'A new message arrived.',
    counter,
    tools: [],
    budget: { contextTokens, reserve: 1024, allocations: DEFAULT_ALLOCATIONS },
  };
}

describe("a message's token counts", () => {
  it('equal what counting its rendering gives, in both encodings, tool runs and file lines included', () => {
    for (const message of MESSAGES) {
      for (const encoding of ENCODINGS) {
        // The raw count kept is the exact count of that encoding's rendering (a model of that encoding counts so).
        const exact = tokenCounter(encoding === 'o200k_base' ? 'gpt-4o' : 'gpt-4');
        expect(renderingCount(message, encoding), `message ${message.id} in ${encoding}`).toBe(
          exact.count(renderMessage(message)),
        );
      }
      for (const model of MODELS) {
        const counter = tokenCounter(model);
        // The margin of a model without a known tokenizer is applied at use.
        expect(renderedTokens(withCounts(message), counter), `message ${message.id} for ${model}`).toBe(
          counter.count(renderMessage(message)),
        );
      }
    }
  });

  it('build the same context as counting every message again, without counting the history again', async () => {
    for (const model of MODELS) {
      const fresh = spying(tokenCounter(model));
      const kept = spying(tokenCounter(model));
      const counted = MESSAGES.map(withCounts);
      // Older messages recall brings back (stored, so with their counts when kept) are shown from their counts too.
      const older = [base(-2, { content: 'the plan from last week' }), base(-1, { content: 'budget: 40k' })];
      const recalled = (messages: RoomMessage[]) => ({ recall: async () => messages });
      const before = await buildContext({ ...input(MESSAGES, fresh.counter), ...recalled(older) });
      const after = await buildContext({ ...input(counted, kept.counter), ...recalled(older.map(withCounts)) });
      expect(after, model).toEqual(before);
      expect(JSON.stringify(after.messages)).toContain('budget: 40k');
      const renderings = [...MESSAGES, ...older].map((m) => renderMessage(m));
      expect(fresh.counted.filter((text) => renderings.includes(text)).length, model).toBe(renderings.length);
      expect(
        kept.counted.filter((text) => renderings.includes(text)),
        model,
      ).toEqual([]);
    }
  });

  it('leave a message clipped to half the history share counted at build time, as before', async () => {
    const counter = tokenCounter('gpt-4o-mini');
    const huge = base(9, { content: 'numbers and words, '.repeat(6000) });
    const before = await buildContext(input([...MESSAGES, huge], counter, 8192));
    const after = await buildContext(input([...MESSAGES, huge].map(withCounts), counter, 8192));
    expect(after).toEqual(before);
    expect(JSON.stringify(after.messages)).toContain('characters cut');
  });
});
