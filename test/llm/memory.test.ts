import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type Harness, startHarness, systemOf, toolResultsOf, turnNoteOf } from '../helpers/harness.js';

let h: Harness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("an agent's memory (seed 004: knowledge and recent actions)", () => {
  it('remembers with `remember`, shows it in later turns in that room (across a restart), and forgets with `forget`', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rt-memory-'));
    dirs.push(dir);
    h = await startHarness({
      agents: [{ name: 'ana', activation: 'mention', tools: ['remember', 'forget'] }],
      storeFile: path.join(dir, 'rt.db'),
    });
    h.llm.script(
      'ana',
      { toolCalls: [{ name: 'remember', arguments: { key: 'launch', value: 'Friday 10:00, room B' } }] },
      { content: 'Noted.' },
    );
    await h.adapter.say('@ana remember: launch is Friday 10:00 in room B');
    await h.bridge.idle();
    expect(toolResultsOf(h.llm.requests[1])).toEqual(['Remembered "launch".']);

    await h.restart();
    h.llm.script('ana', { content: 'Friday at ten.' });
    await h.adapter.say('@ana when is the launch?');
    await h.bridge.idle();
    const later = h.llm.requests.at(-1);
    if (!later) throw new Error('no request');
    expect(systemOf(later)).toContain('>>> KNOWLEDGE (yours: remember / forget) <<<\nlaunch: Friday 10:00, room B');
    // Its recent actions are in the turn's note, not before the history.
    expect(turnNoteOf(later)).toMatch(
      />>> RECENT ACTIONS <<<\n\[\d{4}-\d\d-\d\d \d\d:\d\d\] test:room: remember: launch/,
    );
    // Another room's people may not have seen it: there, neither the knowledge nor the action is shown.
    h.llm.script('ana', { content: 'No idea.' });
    await h.adapter.say('@ana when is the launch?', { channel: 'elsewhere' });
    await h.bridge.idle();
    const elsewhere = h.llm.requests.at(-1);
    if (!elsewhere) throw new Error('no request');
    expect(systemOf(elsewhere)).not.toContain('KNOWLEDGE');
    expect(turnNoteOf(elsewhere)).not.toContain('RECENT ACTIONS');

    h.llm.script(
      'ana',
      {
        toolCalls: [
          { name: 'forget', arguments: { key: 'launch' } },
          { name: 'forget', arguments: { key: 'nothing' } },
        ],
      },
      { content: 'Forgotten.' },
    );
    h.llm.script('ana', { content: 'ok' });
    await h.adapter.say('@ana forget the launch');
    await h.bridge.idle();
    expect(toolResultsOf(h.llm.requests.at(-1))).toEqual([
      'Forgot "launch".',
      '[ERROR: you remember nothing under "nothing"]',
    ]);
    await h.adapter.say('@ana anything to remember?');
    await h.bridge.idle();
    expect(systemOf(h.llm.requests.at(-1) ?? { messages: [] })).not.toContain('KNOWLEDGE');
  });

  it('refuses bad calls with a clear reason', async () => {
    h = await startHarness({ agents: [{ name: 'ana', activation: 'mention', tools: ['remember'] }] });
    h.llm.script(
      'ana',
      {
        toolCalls: [
          { name: 'remember', arguments: { key: '', value: 'x' } },
          { name: 'remember', arguments: { key: 'k', value: 'v'.repeat(2001) } },
        ],
      },
      { content: 'hm' },
    );
    await h.adapter.say('@ana try');
    await h.bridge.idle();
    expect(toolResultsOf(h.llm.requests[1])).toEqual([
      '[ERROR: "key" must be 1 to 100 characters]',
      '[ERROR: "value" must be at most 2000 characters]',
    ]);
  });

  it('logs tool runs as recent actions, newest kept, shown within the recent-actions allocation', async () => {
    h = await startHarness({
      agents: [{ name: 'code', activation: 'mention', tools: ['bash'] }],
      sandbox: new FakeSandbox(),
    });
    h.llm.script('code', { toolCalls: [{ name: 'bash', arguments: { command: 'ls -la' } }] }, { content: 'done' });
    await h.adapter.say('@code list the files');
    await h.bridge.idle();
    const room = { room: 'test:room', audience: null };
    expect(await h.store.actions.recent('code', room)).toEqual([
      { at: expect.any(Number), room: 'test:room', text: 'bash: ls -la' },
    ]);
    h.llm.script('code', { content: 'ok' });
    await h.adapter.say('@code again?');
    await h.bridge.idle();
    const note = turnNoteOf(h.llm.requests.at(-1) ?? { messages: [] });
    expect(note).toContain('test:room: bash: ls -la');
    // Without `remember` there is no knowledge to show: its share went to the room history.
    expect(note).toMatch(/knowledge 0\/0, recent actions \d+\/[\d,]+, room history/);
    for (let i = 0; i < 250; i++) await h.store.actions.add('code', room, `bash: step ${i}`, i);
    const kept = await h.store.actions.recent('code', room, 1000);
    expect(kept).toHaveLength(200);
    expect(kept[0]?.text).toBe('bash: step 249');
  });
});

describe('the remember tool', () => {
  it('refuses a new key once 200 are kept, but still updates a known one', async () => {
    const { rememberTool } = await import('../../src/tools/memory.js');
    const saved: string[] = [];
    const memory = {
      has: async (key: string) => key === 'known',
      count: async () => 200,
      remember: async (key: string) => void saved.push(key),
      forget: async () => false,
    };
    const context = {
      agent: 'ana',
      channelKey: 'test:room',
      sandbox: new FakeSandbox(),
      commandTimeoutMs: 1000,
      signal: new AbortController().signal,
      memory,
    };
    expect(await rememberTool.run({ key: 'new', value: 'x' }, context)).toMatchObject({
      status: 'refused',
      output: '[ERROR: you already remember 200 things here; forget one first]',
    });
    expect(await rememberTool.run({ key: 'known', value: 'y' }, context)).toMatchObject({ status: 'ok' });
    expect(saved).toEqual(['known']);
  });
});
