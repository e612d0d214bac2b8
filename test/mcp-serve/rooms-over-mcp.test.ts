/**
 * The bridge's rooms over MCP, through the SDK's client as an operator's coding agent uses them: the rooms, a room's
 * history, a post the router answers, `/status`, `/pass` stopping a turn, `/budget`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { agentOf } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { SocketPage } from '../web/socket-page.js';
import { signIn, startWebHarness, type WebHarness } from '../web/web-harness.js';
import { call, connect, type HistoryMessage, history, operatorToken } from './mcp-harness.js';

let h: WebHarness | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await h?.close();
  h = undefined;
});

describe('the rooms over MCP', () => {
  it('lists its tools and the rooms, the web rooms postable', async () => {
    h = await startWebHarness();
    client = await connect(h.url, await operatorToken(h, 'ana'));
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual(['budget', 'list_rooms', 'pass', 'post', 'read_history', 'status']);
    const listed = await call(client, 'list_rooms');
    const rooms = listed.structured?.rooms as Array<{ room: string; postable: boolean }>;
    expect(rooms.map((r) => [r.room, r.postable])).toEqual([
      ['web:general', true],
      ['web:ops-room', true],
    ]);
  });

  it('posts as the operator; an agent answers through the router, and the history shows both as stored', async () => {
    h = await startWebHarness();
    const harness = h;
    harness.llm.respond((request) => ({ content: agentOf(request) === 'code' ? 'Tests are green.' : '[pass]' }));
    const ben = await signIn(await harness.invite('ben'));
    const page = await SocketPage.open(harness.url, ben);
    client = await connect(harness.url, await operatorToken(harness, 'ana'));
    const posted = await call(client, 'post', { room: 'general', text: '@code are the tests green?' });
    expect(posted.text).toBe('Posted in web:general as ana.');
    // The people on the page see her message as any message of the room.
    await page.next('event', (f) => f.event.kind === 'message' && f.event.message.author === 'ana');
    let messages: HistoryMessage[] = [];
    await until(async () => {
      messages = (await history(client as Client, { room: 'web:general', limit: 10 })).messages;
      return messages.some((m) => m.author === 'code');
    });
    expect(messages.map((m) => [m.author, m.kind, m.text])).toEqual([
      ['ana', 'human', '@code are the tests green?'],
      ['code', 'agent', 'Tests are green.'],
    ]);
  });

  it('bounds the history it reads, and pages back with `before`', async () => {
    h = await startWebHarness();
    h.llm.respond(() => ({ content: '[pass]' }));
    client = await connect(h.url, await operatorToken(h, 'ana'));
    for (let i = 1; i <= 4; i++) await call(client, 'post', { room: 'general', text: `note ${i}` });
    await until(async () => (await history(client as Client, { room: 'general' })).messages.length === 4);
    const newest = await history(client, { room: 'general', limit: 2 });
    expect(newest.messages.map((m) => m.text)).toEqual(['note 3', 'note 4']);
    const older = await history(client, { room: 'general', limit: 2, before: newest.older });
    expect(older.messages.map((m) => m.text)).toEqual(['note 1', 'note 2']);
    await expect(
      client.callTool({ name: 'read_history', arguments: { room: 'general', limit: 1000 } }),
    ).resolves.toMatchObject({ isError: true });
    const unknown = await call(client, 'read_history', { room: 'discord:123' }, true);
    expect(unknown).toMatchObject({ isError: true, text: 'there is no room "discord:123" (list_rooms names them)' });
  });

  it('answers /status and /budget, and /pass stops a running turn and tells the room', async () => {
    h = await startWebHarness();
    const harness = h;
    harness.llm.respond((request) => (agentOf(request) === 'code' ? { hang: true } : { content: '[pass]' }));
    const ben = await signIn(await harness.invite('ben'));
    const page = await SocketPage.open(harness.url, ben);
    client = await connect(harness.url, await operatorToken(harness, 'ana'));
    page.post({ id: 'long-turn-1', text: '@code take your time' });
    await until(() => harness.llm.requests.length === 1);
    const status = await call(client, 'status', { room: 'general' });
    expect(status.text).toContain('@code');
    const budget = await call(client, 'budget', { room: 'general' });
    expect(budget.text).toMatch(/^Spending on \d{4}-\d{2}-\d{2}/);
    const limited = await call(client, 'budget', { room: 'general', limit: 'bridge 5' });
    // The limit reaches /budget as typed after it (here refused as in any room: the agents have no price).
    expect(limited.text).toMatch(/^A bridge's limit applies to every agent, and @code, @data, @reviewer have no price/);
    const passed = await call(client, 'pass', { room: 'web:general' });
    expect(passed.text).toBe('Control is with the humans (1 agent turn stopped).');
    const line = await page.next(
      'event',
      (f) => f.event.kind === 'message' && f.event.message.role === 'system' && f.event.message.text.includes('/pass'),
    );
    expect(line.event.kind === 'message' && line.event.message.text).toBe(
      'Control is with the humans: ana used /pass from the operator console.',
    );
  });
});
