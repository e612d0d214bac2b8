import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareBatch } from '../../src/llm/batch-call.js';
import { turnContext } from '../../src/llm/turn-context.js';
import { storeServices } from '../../src/llm/turn-services.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { testConfig } from '../helpers/config.js';

let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

function capturedLog(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  return { log, lines };
}

const config = testConfig({
  agents: [
    { name: 'ana', model: 'm', activation: 'always', tools: ['remember', 'forget'] },
    { name: 'ben', model: 'm', activation: 'always' },
  ],
});
const agent = (name: string) => {
  const found = config.agents.find((a) => a.name === name);
  if (!found) throw new Error(name);
  return found;
};
const room = { room: 'test:room', audience: null };
const history = [
  { id: 1, author: 'user', authorId: 'u', kind: 'human' as const, content: 'hello', mentions: [], toolRuns: [], at: 1 },
];

describe("the store's side of a turn", () => {
  it('shows what an agent remembered and its recent actions, in its own turn and in a batch', async () => {
    store = openStore(':memory:');
    const services = storeServices(store, config, capturedLog().log, () => Date.UTC(2026, 0, 2, 3, 4));
    const memory = services.memoryFor?.('ana', room);
    await memory?.remember('launch', 'Friday 10:00');
    await services.recordAction?.('ana', room, { tool: 'bash', input: 'ls -la', output: 'a.csv' });
    await services.recordAction?.('ben', room, { tool: 'bash', input: 'false', output: '[ERROR: exit 1]' });

    const { messages } = await turnContext({
      agent: agent('ana'),
      agentNames: ['ana', 'ben'],
      place: { room: 'test:room', audience: null },
      roomId: 1,
      history,
      tools: [],
      settings: config.settings,
      sources: services,
    });
    expect(String(messages[0]?.content)).toContain(
      '>>> KNOWLEDGE (yours: remember / forget) <<<\nlaunch: Friday 10:00',
    );
    expect(String(messages.at(-1)?.content)).toContain('test:room: bash: ls -la');

    const batch = await prepareBatch({
      members: config.agents.map((a) => ({ agent: a, situation: 'observe' })),
      agentNames: ['ana', 'ben'],
      history,
      place: { room: 'test:room', audience: null },
      roomId: 1,
      settings: config.settings,
      sources: services,
    });
    const [ana, ben] = batch.members.map((m) => m.segment);
    expect(ana?.knowledge).toContain('launch: Friday 10:00');
    expect(ana?.actions).toContain('bash: ls -la');
    expect(ben?.knowledge).toBeUndefined(); // without `remember` there is no knowledge to show
    expect(ben?.actions).toContain('bash: false (failed: exit 1)');
  });

  it("keeps an agent's memory for its remember and forget tools", async () => {
    store = openStore(':memory:');
    const memory = storeServices(store, config, capturedLog().log).memoryFor?.('Ana', room);
    if (!memory) throw new Error('no memory');
    await memory.remember('a', '1');
    await memory.remember('b', '2');
    expect([await memory.has('a'), await memory.count()]).toEqual([true, 2]);
    expect(await memory.forget('a')).toBe(true);
    expect(await memory.forget('a')).toBe(false);
    expect(await store.knowledge.list('ana', room)).toEqual([{ key: 'b', value: '2' }]);
  });

  it('records usage per agent and room, and a store that cannot take it fails no turn: the log says so', async () => {
    store = openStore(':memory:');
    const { log, lines } = capturedLog();
    const services = storeServices(store, config, log);
    await services.recordUsage?.('ana', 'test:room', { input: 100, cached: 20, output: 5 });
    expect(await store.usage.inRoom('test:room')).toEqual([
      { agent: 'ana', calls: 1, input: 100, cached: 20, output: 5 },
    ]);
    await store.close();
    await expect(
      services.recordUsage?.('ana', 'test:room', { input: 1, cached: 0, output: 1 }),
    ).resolves.toBeUndefined();
    await expect(
      services.recordAction?.('ana', room, { tool: 'bash', input: 'ls', output: '' }),
    ).resolves.toBeUndefined();
    expect(lines.filter((l) => l.includes('could not record token usage'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('could not record an action'))).toHaveLength(1);
  });
});
