import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STOPPED_LINE } from '../../adapters/console/console-adapter.js';
import { run } from '../../src/main.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { agentOf, newestOf, roomMessagesOf } from '../helpers/harness.js';
import { history, turnState } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';
import { FakeTerminal } from './fake-terminal.js';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const MAIN = path.join(ROOT, 'src/main.ts');

let llm: FakeOpenAI;
let dir: string;
beforeAll(async () => {
  llm = await startFakeOpenAI();
});
afterAll(async () => llm.close());
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-console-'));
  mkdirSync(path.join(dir, 'agents'));
  llm.requests.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function agentFile(name: string, front: string) {
  writeFileSync(
    path.join(dir, 'agents', `${name}.md`),
    `---\nname: ${name}\nmodel: ${name}\n${front}\n---\nYou are ${name}.\n`,
  );
}

/** Runs the terminal room in-process with piped input; returns what it printed. */
async function room(lines: string[], env: Record<string, string> = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
  });
  const sandbox = new FakeSandbox((_key, command) => ({ output: `output of ${command}`, exitCode: 0 }));
  const running = await run({
    argv: [],
    cwd: dir,
    env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', ...env },
    stdin,
    stdout,
    sandbox: async () => sandbox,
  });
  stdin.end(`${lines.join('\n')}\n`);
  await running.console?.finished;
  await running.shutdown();
  return { printed, sandbox };
}

describe('terminal room', () => {
  it('prints every message as [@name]: text, tool runs, and system lines, then exits at end of input', async () => {
    agentFile('code', 'activation: mention\ntools: [bash]');
    agentFile('data', 'activation: always');
    llm.respond((request) => {
      const agent = agentOf(request);
      const last = request.messages.at(-1);
      const newest = newestOf(request);
      if (agent === 'data' && newest.startsWith('[@user]')) return { content: '@code count the rows' };
      if (agent === 'code' && last?.role === 'tool') return { content: '@data 42 rows' };
      if (agent === 'code' && newest.includes('count the rows')) {
        return { toolCalls: [{ name: 'bash', arguments: { command: 'wc -l sales.csv' } }] };
      }
      if (agent === 'data' && newest.includes('42 rows')) return { content: 'We have 42 rows.' };
      return { content: '[pass]' };
    });
    const { printed } = await room(['how many rows?', '/status']);
    const lines = printed.split('\n');
    expect(lines[0]).toMatch(/^\[system\]: Roundtable terminal room\. Agents: @code, @data\./);
    expect(lines.slice(1)).toEqual([
      '[@user]: how many rows?',
      '[@data]: @code count the rows',
      '[@code] running: wc -l sales.csv',
      '[result]: output of wc -l sales.csv',
      '[@code]: @data 42 rows',
      '[@data]: We have 42 rows.',
      '[system]: Room console:main',
      'Working: nobody',
      'Agent messages in a row: 3 of 20',
      'Control: agents',
      'Privacy: off',
      'Agents: @code (mention), @data (always)',
      'Open requests: none',
      'Tokens (this room; all rooms):',
      expect.stringMatching(/^- @code: [\d,]+ in \(0 cached\), \d+ out; [\d,]+ in \(0 cached\), \d+ out$/),
      expect.stringMatching(/^- @data: [\d,]+ in \(0 cached\), \d+ out; [\d,]+ in \(0 cached\), \d+ out$/),
      'Sandbox: fake sandbox, last command: wc -l sales.csv',
      '',
    ]);
    // The transcript stays clean: logs went to the data folder.
    expect(readFileSync(path.join(dir, 'data', 'roundtable.log'), 'utf8')).toMatch(/"msg":"bridge started"/);
  });

  it("clears the room's history with /clear and refuses unknown commands", async () => {
    agentFile('echo', 'activation: always');
    llm.respond((request) => ({ content: `I see ${roomMessagesOf(request).length} messages` }));
    const { printed } = await room(['one', '/clear', 'two', '/nope']);
    expect(printed).toContain('[@echo]: I see 1 messages\n');
    expect(printed).toContain('[system]: History of this room cleared.\n');
    expect(printed.match(/I see 1 messages/g)).toHaveLength(2);
    expect(printed).toContain('[system]: Unknown command /nope.');
  });

  it("answers /budget with today's spend, as on every platform", async () => {
    agentFile('echo', 'activation: always');
    llm.respond(() => ({ content: 'hi' }));
    const { printed } = await room(['/budget']);
    expect(printed).toMatch(/^\[system\]: Roundtable terminal room\. .*Commands: .*\/budget/m);
    expect(printed).not.toContain('Unknown command');
    expect(printed).toMatch(/\[system\]: Spending on \d{4}-\d{2}-\d{2} \(/);
    expect(printed).toContain('- bridge: $0');
  });

  it('shows the first 500 characters of a tool result', async () => {
    agentFile('code', 'activation: always\ntools: [bash]');
    llm.script('code', { toolCalls: [{ name: 'bash', arguments: { command: 'x'.repeat(600) } }] }, { content: 'done' });
    const { printed } = await room(['go']);
    const result = printed.split('\n').find((l) => l.startsWith('[result]: ')) ?? '';
    expect(result).toBe(`[result]: output of ${'x'.repeat(490)}...`);
  });
});

describe('terminal room, /pass on piped input', () => {
  it('stops the model call under way at once, instead of after the answer', async () => {
    agentFile('data', 'activation: always');
    llm.respond(() => ({ content: 'too late', delayMs: 60_000 }));
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let printed = '';
    stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const running = await run({
      argv: [],
      cwd: dir,
      env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0' },
      stdin,
      stdout,
      sandbox: async () => new FakeSandbox(),
    });
    stdin.write('take your time\n');
    await until(() => llm.requests.length === 1);
    stdin.end('/pass\n');
    // The answer would take a minute: /pass is answered long before, and the turn never posts.
    await until(() => printed.includes('[system]: Control is with the humans (1 agent turn stopped).'));
    await running.console?.finished;
    expect(await turnState(running.store, 'console', 'main')).toMatchObject({ control: 'humans', reason: '/pass' });
    await running.shutdown();
    expect(printed).not.toContain('too late');
  }, 30_000);

  it('comes after the lines before it: a /pass right behind a message stops the turn it starts', async () => {
    agentFile('data', 'activation: always');
    llm.respond((request) =>
      String(request.messages.at(-1)?.content).includes('take your time')
        ? { content: 'too late', delayMs: 60_000 }
        : { content: 'quick answer' },
    );
    const { printed } = await room(['take your time', '/pass', 'and now?']);
    expect(printed).not.toContain('too late');
    expect(printed).toMatch(
      /\[@user\]: take your time\n\[system\]: Control is with the humans \(\d agent turns? stopped\)\.\n\[@user\]: and now\?\n\[@data\]: quick answer\n/,
    );
  }, 30_000);
});

describe('terminal room across a restart', () => {
  it('says how many messages of history were loaded for the room', async () => {
    agentFile('echo', 'activation: always');
    llm.respond(() => ({ content: 'pong' }));
    const first = await room(['ping', 'ping again']);
    expect(first.printed).not.toContain('of history loaded');
    const second = await room(['/status']);
    expect(second.printed.split('\n')[1]).toBe('[system]: 4 messages of history loaded for this room.');
    const limited = await room([], { HISTORY_LIMIT: '3' });
    expect(limited.printed.split('\n')[1]).toBe('[system]: 3 messages of history loaded for this room.');
  });
});

describe('terminal room on a terminal, with the bridge', () => {
  async function terminalRoom() {
    const terminal = new FakeTerminal();
    const running = await run({
      argv: [],
      cwd: dir,
      env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0' },
      stdin: terminal.input,
      stdout: terminal.output,
      sandbox: async () => new FakeSandbox(),
    });
    return { terminal, running };
  }

  it('Ctrl-C stops a slow answer, hands control to the humans, and the next line is answered', async () => {
    agentFile('data', 'activation: always');
    llm.respond((request) =>
      String(request.messages.at(-1)?.content).includes('take your time')
        ? { content: 'too late', delayMs: 60_000 }
        : { content: 'quick answer' },
    );
    const { terminal, running } = await terminalRoom();
    terminal.type('take your time\r');
    await terminal.waitFor((rows) => rows.includes('@data is thinking…'));
    terminal.type('\x03');
    await terminal.waitFor((rows) => rows.includes(STOPPED_LINE) && !rows.includes('@data is thinking…'));
    expect(await turnState(running.store, 'console', 'main')).toMatchObject({
      control: 'humans',
      reason: '/pass',
    });
    terminal.type('and now?\r');
    await terminal.waitFor((rows) => rows.includes('[@data]: quick answer'));
    expect((await terminal.screen()).join('\n')).not.toContain('too late');
    terminal.type('\x03'); // idle now: quits
    await running.console?.finished;
    await running.shutdown();
  });

  it('/quit while an agent answers names the agent it waits for, and leaves once the answer is in', async () => {
    agentFile('data', 'activation: always');
    llm.respond(() => ({ content: 'here it is', delayMs: 1500 }));
    const { terminal, running } = await terminalRoom();
    terminal.type('a slow one\r');
    await terminal.waitFor((rows) => rows.includes('@data is thinking…'));
    terminal.type('/quit\r');
    await terminal.waitFor((rows) =>
      rows.join('').includes('[system]: leaving once @data finishes (Ctrl-C leaves now)'),
    );
    await running.console?.finished;
    expect((await terminal.screen()).join('\n')).toContain('[@data]: here it is');
    await running.shutdown();
  });

  it('a pasted code block is one message, and the mentions inside it wake nobody', async () => {
    agentFile('code', 'activation: mention');
    llm.respond(() => ({ content: 'on it' }));
    const { terminal, running } = await terminalRoom();
    terminal.paste('please review:\n```\n@code rm -rf /\n```\n');
    terminal.type('\r');
    await until(async () => (await history(running.store, 'console', 'main', 10)).length === 1);
    await running.bridge.idle();
    expect((await history(running.store, 'console', 'main', 10)).map((m) => m.content)).toEqual([
      'please review:\n```\n@code rm -rf /\n```',
    ]);
    expect(llm.requests).toEqual([]);
    terminal.type('@code go\r');
    await terminal.waitFor((rows) => rows.includes('[@code]: on it'));
    terminal.type('/quit\r');
    await running.console?.finished;
    await running.shutdown();
  });
});

describe('npm start', () => {
  it('runs with piped stdin, prints no prompt, and exits 0 at end of input', async () => {
    agentFile('echo', 'activation: always');
    llm.respond(() => ({ content: 'pong' }));
    const child = exec(TSX, [MAIN], {
      cwd: dir,
      env: { ...process.env, OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', SANDBOX_IMAGE: 'absent-image:none' },
      timeout: 30_000,
    });
    child.child.stdin?.end('ping\n');
    const { stdout } = await child;
    expect(stdout.split('\n').slice(1)).toEqual(['[@user]: ping', '[@echo]: pong', '']);
  });

  it('stops with one line naming the file and field of a bad agent file', async () => {
    agentFile('echo', 'activation: sometimes');
    const error = await exec(TSX, [MAIN], { cwd: dir, timeout: 30_000 }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(error).toMatchObject({ code: 1 });
    expect((error as { stderr: string }).stderr.trim()).toBe(
      `Configuration error: ${path.join('agents', 'echo.md')}: activation: Invalid option: expected one of "always"|"mention"`,
    );
  });
});

describe('terminal room resilience', () => {
  it('keeps reading after a message fails to be handled, and still finishes at end of input', async () => {
    const { ConsoleAdapter } = await import('../../adapters/console/index.js');
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let printed = '';
    stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const adapter = new ConsoleAdapter({ input: stdin, output: stdout, interactive: false });
    const received: string[] = [];
    await adapter.start({
      receive: async (event) => {
        if (event.text === 'boom') throw new Error('the store is locked');
        received.push(event.text);
      },
      command: async () => 'ok',
      lastMessageId: () => undefined,
    });
    stdin.end('boom\nstill here\n');
    await adapter.finished;
    expect(received).toEqual(['still here']);
    expect(printed).toContain('[system]: that message could not be handled: the store is locked');
  });
});
