/**
 * An agent's MCP tools in a whole turn, through the fake Discord and the fake model: the reference server's tool is
 * offered to the model as `everything__echo`, run in the room's sandbox process, its result read back as untrusted
 * data and answered in the room; `approvals:` holds a call for the human who asked; `/pass` during a slow call
 * cancels it on the wire.
 */
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApprovalRules } from '../../src/access/approval-rules.js';
import type { McpServerConfig } from '../../src/config/mcp-servers.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import { type HostProcess, hostProcess } from '../fakes/host-process.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { readMarked } from '../helpers/untrusted.js';

const EVERYTHING = path.resolve('node_modules/.bin/mcp-server-everything');
const server: McpServerConfig = {
  kind: 'stdio',
  name: 'everything',
  command: EVERYTHING,
  args: ['stdio'],
  env: {},
  run: 'sandbox',
};

let h: DiscordHarness;
const processes: HostProcess[] = [];
afterEach(async () => {
  await h?.close();
  await Promise.all(processes.splice(0).map((p) => p.kill()));
});

const lastTool = (request: RecordedRequest) => {
  const last = request.messages.at(-1);
  return last?.role === 'tool' ? String(last.content) : undefined;
};
const botTexts = () => h.discord.botMessages('general').map((m) => m.content);
const codeBot = () => h.discord.bot('code-bot');

async function start(
  call: { name: string; arguments: Record<string, unknown> },
  approvals?: ApprovalRules,
  env: Record<string, string> = {},
  mcp: McpServerConfig = server,
) {
  h = await startDiscordHarness({
    env,
    agents: [
      { name: 'data', activation: 'mention', control: true },
      { name: 'code', activation: 'mention', mcp: [mcp], ...(approvals ? { approvals } : {}) },
    ],
    operators: ['otto'],
    humans: [{ name: 'alice', nick: 'Alice' }, { name: 'carol' }, { name: 'otto' }],
  });
  Object.assign(h.sandbox, {
    spawn: async (_key: string, spec: Parameters<typeof hostProcess>[0]) => {
      const started = await hostProcess(spec);
      processes.push(started);
      return started;
    },
  });
  h.llm.respond((request) => {
    const result = lastTool(request);
    if (result !== undefined) {
      const block = readMarked(result).blocks[0];
      return { content: `result from ${block?.source}: ${block?.body.replace(/\s+/g, ' ').trim()}` };
    }
    return { toolCalls: [call] };
  });
}

describe('an agent turn with MCP tools', () => {
  it('offers the tool, runs it in the room sandbox process, reads the result as untrusted data, answers', async () => {
    await start({ name: 'everything__echo', arguments: { message: 'from the room' } });
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> echo something`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result from')));
    await h.settle(asked.id);
    expect(botTexts().at(-1)).toBe('result from tool:everything__echo: Echo: from the room');
    const offered = ((h.llm.requests[0]?.tools ?? []) as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(offered).toContain('everything__echo');
    expect(offered).toEqual([...offered].sort());
    // The same tool block on the turn's second call (the prompt cache keeps it).
    expect(h.llm.requests[1]?.tools).toEqual(h.llm.requests[0]?.tools);
    expect(processes).toHaveLength(1);
    const status = await h.discord.slash('data-bot', 'otto', 'general', 'status');
    expect(status.content).toMatch(/MCP code · everything \(stdio in the sandbox\): ready, \d+ tools/);
    const console = await h.bridge.sink.overview?.();
    const room = console?.rooms.find((r) => r.platform === 'discord' && r.mcp?.length);
    expect(room?.mcp?.[0]).toMatch(/^MCP code · everything \(stdio in the sandbox\): ready, \d+ tools$/);
  });

  it('/reset stops the room servers with its sandbox; the next turn starts them again', async () => {
    await start({ name: 'everything__echo', arguments: { message: 'one' } });
    const first = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> echo one`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result from')));
    await h.settle(first.id);
    const exited = vi.fn();
    processes[0]?.onExit(exited);
    await h.discord.slash('data-bot', 'otto', 'general', 'reset');
    await vi.waitFor(() => expect(exited).toHaveBeenCalled(), { timeout: 30_000, interval: 50 });
    const status = await h.discord.slash('data-bot', 'otto', 'general', 'status');
    expect(status.content).toMatch(/MCP code · everything \(stdio in the sandbox\): not started/);
    const second = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> echo two`);
    await h.discord.until(() => botTexts().filter((t) => t.startsWith('result from')).length === 2);
    await h.settle(second.id);
    expect(processes).toHaveLength(2);
  });

  it('holds a call under approvals: ask until the human who asked approves it', async () => {
    await start(
      { name: 'everything__echo', arguments: { message: 'held' } },
      { modes: new Map([['everything__*', 'ask']]), bashAllow: [], bashDeny: [] },
    );
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> echo it`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('Approval needed [A1]')));
    const card = botTexts().find((t) => t.startsWith('Approval needed [A1]')) ?? '';
    expect(card).toContain('everything__echo');
    expect(card).toContain('"message": "held"');
    const wire = () => processes.flatMap((p) => p.written).join('');
    expect(wire()).not.toMatch(/"method":"tools\/call"/);
    const byCarol = await h.discord.slash('data-bot', 'carol', 'general', 'approve', { id: 'A1' });
    expect(byCarol.content).toBe('Only @Alice (who asked) or an operator can answer A1.');
    expect(wire()).not.toMatch(/"method":"tools\/call"/);
    await h.discord.slash('data-bot', 'alice', 'general', 'approve', { id: 'A1' });
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result from')));
    await h.settle(asked.id);
    expect(botTexts().at(-1)).toBe('result from tool:everything__echo: Echo: held');
    expect(wire().match(/"method":"tools\/call"/g)).toHaveLength(1);
  });

  it('counts MCP calls against MAX_TOOL_ROUNDS like any tool call', async () => {
    await start({ name: 'everything__echo', arguments: { message: 'again' } }, undefined, { MAX_TOOL_ROUNDS: '2' });
    h.llm.respond(() => ({ toolCalls: [{ name: 'everything__echo', arguments: { message: 'again' } }] }));
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> echo for ever`);
    await h.discord.until(() => botTexts().some((t) => t.includes('stopped after 2 tool rounds')));
    await h.settle(asked.id);
    const wire = processes.flatMap((p) => p.written).join('');
    expect(wire.match(/"method":"tools\/call"/g)).toHaveLength(2);
  });

  it('holds a priced call against the daily limits: the call over the limit is not made and the turn stops', async () => {
    await start(
      { name: 'everything__echo', arguments: { message: 'paid' } },
      undefined,
      { SPEND_LIMIT_USD_DAY: '1' },
      {
        ...server,
        priceUsdPerCall: 0.4,
      },
    );
    h.llm.respond(() => ({ toolCalls: [{ name: 'everything__echo', arguments: { message: 'paid' } }] }));
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> echo for money`);
    await h.discord.until(() => botTexts().some((t) => /limit/i.test(t)));
    await h.settle(asked.id);
    const wire = processes.flatMap((p) => p.written).join('');
    expect(wire.match(/"method":"tools\/call"/g)).toHaveLength(2);
    expect(h.llm.requests).toHaveLength(3);
    expect(botTexts().at(-1)).toMatch(/bridge.*limit.*\$1\.00/i);
    const budget = await h.discord.slash('data-bot', 'otto', 'general', 'budget');
    expect(budget.content).toMatch(/@code: \$0\.80/);
  });

  it('/pass during a slow call cancels it with notifications/cancelled', async () => {
    await start({ name: 'everything__trigger-long-running-operation', arguments: { duration: 60, steps: 60 } });
    h.discord.humanSays('general', 'alice', `<@${codeBot().id}> run the long thing`);
    const wire = () => processes.flatMap((p) => p.written).join('');
    await vi.waitFor(() => expect(wire()).toMatch(/"method":"tools\/call"/), { timeout: 30_000, interval: 50 });
    await h.discord.slash('data-bot', 'otto', 'general', 'pass');
    await vi.waitFor(() => expect(wire()).toMatch(/"method":"notifications\/cancelled"/), {
      timeout: 30_000,
      interval: 50,
    });
    expect(botTexts().some((t) => t.startsWith('result from'))).toBe(false);
  });
});
