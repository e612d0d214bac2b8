/**
 * The terminal room beside the web room in one bridge (`npm start -- --console` with WEB_PORT, as `run` wires them):
 * an operator's agent posts into it over MCP; the terminal shows the message as hers and the agent's answer, and the
 * router answered it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { inviteLink } from '../../adapters/web/invite-cli.js';
import { run } from '../../src/main.js';
import { issueToken } from '../../src/mcp-serve/tokens.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { startFakeOpenAI } from '../fakes/openai-server/index.js';
import { agentOf } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { call, connect, history } from './mcp-harness.js';

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe('the terminal room over MCP', () => {
  it('takes a post from an operator’s agent: shown on the terminal as hers, answered by the agent it names', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rt-mcp-terminal-'));
    mkdirSync(path.join(dir, 'agents'));
    for (const name of ['code', 'data']) {
      writeFileSync(path.join(dir, 'agents', `${name}.md`), `---\nname: ${name}\nmodel: m\n---\nYou help.\n`);
    }
    const llm = await startFakeOpenAI();
    llm.respond((request) => ({ content: agentOf(request) === 'code' ? 'Built.' : '[pass]' }));
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let screen = '';
    stdout.on('data', (chunk) => {
      screen += String(chunk);
    });
    const running = await run({
      argv: ['--console'],
      cwd: dir,
      env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', WEB_PORT: '0', WEB_ROOMS: 'general' },
      stdin,
      stdout,
      sandbox: async () => new FakeSandbox(),
    });
    cleanup.push(async () => {
      stdin.end();
      await running.shutdown();
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const url = `http://127.0.0.1:${running.webPort}`;
    await inviteLink(running.store.people, { name: 'ana', operator: true }, url, Date.now());
    const made = await issueToken(running.store.people, 'ana', Date.now());
    if ('problem' in made) throw new Error(made.problem);
    const client: Client = await connect(url, made.token);
    cleanup.push(() => client.close());

    const rooms = (await call(client, 'list_rooms')).structured?.rooms as Array<{ room: string; postable: boolean }>;
    expect(rooms.filter((r) => r.postable).map((r) => r.room)).toEqual(['console:main', 'web:general']);
    await call(client, 'post', { room: 'console:main', text: '@code build it' });
    await until(() => screen.includes('[@code]: Built.'));
    expect(screen).toContain('[@ana]: @code build it\n');
    const read = await history(client, { room: 'console:main' });
    expect(read.messages.map((m) => [m.author, m.kind, m.text])).toEqual([
      ['ana', 'human', '@code build it'],
      ['code', 'agent', 'Built.'],
    ]);
  });
});
