import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main, USAGE } from '../../src/main.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';

let dir: string;
let llm: FakeOpenAI;
let discord: FakeDiscord;
let slack: FakeSlack;
let slackApp: { botToken: string; appToken: string };

beforeAll(async () => {
  llm = await startFakeOpenAI({ models: ['m'] });
  discord = await startFakeDiscord({ bots: [{ token: 'tok-data', name: 'data-bot' }] });
  slack = await startFakeSlack();
  slackApp = slack.addApp('data');
});
afterAll(async () => {
  await llm.close();
  await discord.close();
  await slack.close();
});
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-check-'));
  mkdirSync(path.join(dir, 'agents'));
  return () => rmSync(dir, { recursive: true, force: true });
});

const agentFile = (name: string, front: string, model = 'm') =>
  writeFileSync(
    path.join(dir, 'agents', `${name}.md`),
    `---\nname: ${name}\nmodel: ${model}\n${front}\n---\nYou are ${name}.\n`,
  );

/** Runs `npm start -- <argv>` in-process; returns the exit code and what it printed. */
async function start(argv: string[], env: Record<string, string> = {}) {
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
  });
  const stderr: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => stderr.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    // As from a terminal: the terminal room would have someone to serve.
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const code = await main({ argv, cwd: dir, env: { LOG_LEVEL: 'silent', ...env }, stdout, stdin });
    return { code, lines: printed.trimEnd().split('\n'), stderr: stderr.join('') };
  } finally {
    process.stderr.write = write;
  }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('npm start -- --check', () => {
  it('checks every item, one ✓ line each, and exits 0 without starting anything', async () => {
    agentFile(
      'data',
      'discord: { token_env: DATA_DISCORD }\nslack: { bot_token_env: DATA_SLACK_BOT, app_token_env: DATA_SLACK_APP }',
    );
    agentFile('code', 'activation: mention');
    const { code, lines } = await start(['--check'], {
      OPENAI_BASE_URL: llm.baseURL,
      DISCORD_API_URL: discord.apiURL,
      SLACK_API_URL: slack.apiUrl,
      DATA_DISCORD: 'tok-data',
      DATA_SLACK_BOT: slackApp.botToken,
      DATA_SLACK_APP: slackApp.appToken,
    });
    expect(lines[1]).toMatch(
      new RegExp(`^✓ data folder: ${path.join(dir, 'data')} is writable, [\\d.]+ [KMG]iB free$`),
    );
    expect(lines).toEqual([
      '✓ environment: every setting is valid',
      lines[1],
      '✓ sandbox template folder: not set (new workspaces start empty)',
      '✓ agent files: 2 in ./agents (@code, @data)',
      '✓ rooms: Discord as @data; Slack as @data',
      `✓ model endpoint ${llm.baseURL} (@code, @data): reachable (GET /models: 200), no key needed, has m`,
      '✓ Docker: not needed (no agent has bash or file tools)',
      '✓ access: everyone the platform lets in, in every channel (set ACCESS_USERS or ACCESS_ROLES to narrow it); ' +
        'DM_POLICY=pair: a first DM gets a code an operator approves with /pair <code>; no OPERATORS set',
      '✓ Discord @data: token accepted (bot user data-bot)',
      '✓ Slack @data: tokens accepted (bot user data in Fake Workspace; Socket Mode)',
      '✓ traces: off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them)',
      'All 11 checks passed.',
    ]);
    expect(code).toBe(0);
    // Nothing was started: no store, no connection kept.
    expect(existsSync(path.join(dir, 'data', 'roundtable.db'))).toBe(false);
    expect(discord.gatewayConnected('data-bot')).toBe(false);
  });

  it('says what is wrong with each item, with ✗, and exits 1', async () => {
    agentFile(
      'data',
      'tools: [bash]\ndiscord: { token_env: DATA_DISCORD }\nslack: { bot_token_env: DATA_SLACK_BOT, app_token_env: DATA_SLACK_APP }',
    );
    agentFile('code', `endpoint: http://127.0.0.1:${await closedPort()}/v1`);
    agentFile('reviewer', 'activation: always');
    const { code, lines } = await start(['--check'], {
      DISCORD_API_URL: discord.apiURL,
      SLACK_API_URL: slack.apiUrl,
      DATA_DISCORD: 'not-the-token',
      DATA_SLACK_BOT: 'xoxb-wrong',
      DATA_SLACK_APP: slackApp.appToken,
      SANDBOX_TEMPLATE_DIR: './no-such-folder',
      SANDBOX_IMAGE: 'roundtable-never-built:none',
    });
    expect(code).toBe(1);
    expect(lines).toContain(
      `✗ sandbox template folder: SANDBOX_TEMPLATE_DIR: folder ${path.join(dir, 'no-such-folder')} does not exist`,
    );
    expect(lines.find((l) => l.includes('/v1 (@code)'))).toMatch(
      /^✗ model endpoint http:\/\/127\.0\.0\.1:\d+\/v1 \(@code\): cannot reach .*\/models \(ECONNREFUSED\)/,
    );
    expect(lines).toContain(
      '✗ model endpoint https://api.openai.com/v1 (@data, @reviewer): no API key: set OPENAI_API_KEY (or api_key_env in the agent file)',
    );
    // Docker: the engine is missing here, or the image is: either way one ✗ line says which.
    expect(lines.some((l) => /^✗ (Docker engine|sandbox image roundtable-never-built:none): /.test(l))).toBe(true);
    expect(lines).toContain(
      '✗ Discord @data: token refused (401): copy the bot token again from the developer portal (Bot → Reset Token)',
    );
    expect(lines).toContain('✗ Slack @data: bot token refused by auth.test (invalid_auth)');
    expect(lines.at(-1)).toMatch(/^\d+ of \d+ checks failed\.$/);
  });

  it('says which rooms npm start would open: the terminal room, and its log file, when no agent has tokens', async () => {
    agentFile('data', '');
    const { lines } = await start(['--check'], { OPENAI_BASE_URL: llm.baseURL });
    expect(lines).toContain(
      '✓ rooms: the terminal room only: no agent file has discord: or slack: tokens (npm start then needs a terminal or piped lines)',
    );
    // The terminal room's stdout is the transcript, so the log goes to a file that must be writable.
    expect(lines).toContain(`✓ log file: ${path.join(dir, 'data', 'roundtable.log')} is writable`);
    const forced = await start(['--check', '--console'], { OPENAI_BASE_URL: llm.baseURL });
    expect(forced.lines).toContain('✓ rooms: the terminal room only (--console)');
  });

  it('names the variable of a bad setting, including SANDBOX_* values', async () => {
    agentFile('data', '');
    const memory = await start(['--check'], { SANDBOX_MEMORY: 'lots' });
    expect(memory.code).toBe(1);
    expect(memory.lines[0]).toBe(
      '✗ environment: SANDBOX_MEMORY: expected a size of at least 6m such as 512m or 1g (got "lots")',
    );
    expect((await start(['--check'], { SANDBOX_NETWORK: 'my net' })).lines[0]).toMatch(
      /^✗ environment: SANDBOX_NETWORK: expected none, bridge, host/,
    );
    expect((await start(['--check'], { SANDBOX_IMAGE: 'Not An Image' })).lines[0]).toMatch(
      /^✗ environment: SANDBOX_IMAGE: expected a Docker image reference/,
    );
  });

  it('reports an agent file error on its own line and checks the rest', async () => {
    agentFile('data', 'activation: sometimes');
    const { code, lines } = await start(['--check'], { OPENAI_BASE_URL: llm.baseURL });
    expect(code).toBe(1);
    expect(lines).toContain(
      `✗ agent files: ${path.join('agents', 'data.md')}: activation: Invalid option: expected one of "always"|"mention"`,
    );
    expect(lines[0]).toBe('✓ environment: every setting is valid');
  });
});

describe('npm start -- --check on the model endpoint', () => {
  const endpointLines = (lines: string[]) => lines.filter((line) => / model (endpoint|of) /.test(line));

  it('fails an agent whose model the server does not list, naming the file, the model and models it has', async () => {
    const ollama = await startFakeOpenAI({
      models: ['llama3.2:latest', 'qwen2.5-coder:7b', 'mistral:latest', 'phi4:latest', 'gemma3:4b', 'deepseek-r1:8b'],
      modelOwner: 'library',
    });
    try {
      agentFile('code', '', 'gpt-4o-mini');
      agentFile('data', '', 'llama3.2'); // Ollama reads `llama3.2` as `llama3.2:latest`
      const { code, lines } = await start(['--check'], { OPENAI_BASE_URL: ollama.baseURL });
      expect(code).toBe(1);
      expect(endpointLines(lines)).toEqual([
        `✓ model endpoint ${ollama.baseURL} (@code, @data): reachable (GET /models: 200), no key needed, has llama3.2`,
        `✗ model of @code: ${path.join('agents', 'code.md')}: model: gpt-4o-mini is not among the models ${ollama.baseURL} has (it lists llama3.2:latest, qwen2.5-coder:7b, mistral:latest, phi4:latest, gemma3:4b and 1 more)`,
      ]);
    } finally {
      await ollama.close();
    }
  });

  it('says to add /v1 when the base URL has no /models but the same base with /v1 has', async () => {
    const root = llm.baseURL.replace(/\/v1$/, '');
    agentFile('data', '');
    const global = await start(['--check'], { OPENAI_BASE_URL: root });
    expect(global.code).toBe(1);
    expect(endpointLines(global.lines)).toEqual([
      `✗ model endpoint ${root} (@data): GET /models answered 404, but ${root}/v1/models answers: the base URL lacks /v1: set OPENAI_BASE_URL=${root}/v1`,
    ]);
    agentFile('code', `endpoint: ${root}/`);
    const own = await start(['--check'], { OPENAI_BASE_URL: llm.baseURL });
    expect(endpointLines(own.lines)).toContain(
      `✗ model endpoint ${root}/ (@code): GET /models answered 404, but ${root}/v1/models answers: the base URL lacks /v1: set endpoint: ${root}/v1 in ${path.join('agents', 'code.md')}`,
    );
  });

  it('passes a server without /models, saying the models are not checked', async () => {
    const bare = createHttpServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('404 page not found');
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(bare.address() as { port: number }).port}/v1`;
    try {
      agentFile('data', '', 'whatever-model');
      const { code, lines } = await start(['--check'], { OPENAI_BASE_URL: base });
      expect(endpointLines(lines)).toEqual([
        `✓ model endpoint ${base} (@data): reachable (it has no /models: 404, so the models are not checked), no key needed`,
      ]);
      expect(code).toBe(0);
    } finally {
      bare.closeAllConnections();
      await new Promise<void>((resolve) => bare.close(() => resolve()));
    }
  });

  it("passes any model name on llama.cpp's one-model server, which answers to any name", async () => {
    const llamacpp = await startFakeOpenAI({ models: ['/models/qwen2.5-7b-q4.gguf'], modelOwner: 'llamacpp' });
    try {
      agentFile('data', '', 'gpt-4o-mini');
      const { code, lines } = await start(['--check'], { OPENAI_BASE_URL: llamacpp.baseURL });
      expect(endpointLines(lines)).toEqual([
        `✓ model endpoint ${llamacpp.baseURL} (@data): reachable (GET /models: 200), no key needed, one model (/models/qwen2.5-7b-q4.gguf) that answers to any model name`,
      ]);
      expect(code).toBe(0);
    } finally {
      await llamacpp.close();
    }
  });
});

describe('npm start command line', () => {
  it('prints the options with --help and exits 0', async () => {
    const { code, lines } = await start(['--help']);
    expect(code).toBe(0);
    expect(`${lines.join('\n')}\n`).toBe(USAGE);
    expect(USAGE).toMatch(/--check/);
    expect(USAGE).toMatch(/--console/);
  });

  it('refuses an unknown flag with exit code 2 and starts nothing', async () => {
    agentFile('data', '');
    const { code, stderr } = await start(['--chek']);
    expect(code).toBe(2);
    expect(stderr).toBe('unknown option --chek (npm start -- --help lists the options)\n');
    expect(existsSync(path.join(dir, 'data'))).toBe(false);
    expect((await start(['extra'])).stderr).toMatch(/^unexpected argument "extra"/);
  });
});
