import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startHealthServer, storeWritable } from '../../src/health.js';
import { silentLogger } from '../../src/log.js';
import { run } from '../../src/main.js';
import { openStore } from '../../src/store/index.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { agentOf, newestOf } from '../helpers/harness.js';

let llm: FakeOpenAI;
let dir: string;
beforeAll(async () => {
  llm = await startFakeOpenAI();
});
afterAll(() => llm.close());
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-health-'));
  mkdirSync(path.join(dir, 'agents'));
  return () => rmSync(dir, { recursive: true, force: true });
});

const agentFile = (name: string, front: string) =>
  writeFileSync(
    path.join(dir, 'agents', `${name}.md`),
    `---\nname: ${name}\nmodel: ${name}\n${front}\n---\nYou are ${name}.\n`,
  );

async function get(port: number | undefined, route: string): Promise<{ status: number; type: string; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${route}`);
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text() };
}

/** The value of one sample line of the Prometheus text, e.g. `roundtable_passes_total{agent="data"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('HEALTH_PORT', () => {
  it('serves /healthz and Prometheus /metrics counted at the edges', async () => {
    agentFile('code', 'activation: mention\ntools: [bash]');
    agentFile('data', 'activation: always');
    llm.respond((request) => {
      const agent = agentOf(request);
      const last = request.messages.at(-1);
      const newest = newestOf(request);
      if (agent === 'data' && newest.includes('[@user]: count')) return { content: '@code count the rows' };
      if (agent === 'code' && last?.role === 'tool') return { content: '@data 42 rows' };
      if (agent === 'code') return { toolCalls: [{ name: 'bash', arguments: { command: 'wc -l sales.csv' } }] };
      if (agent === 'data' && newest.includes('42 rows')) return { content: 'We have 42 rows.' };
      if (newest.includes('break')) return { status: 500, errorMessage: 'model overloaded' };
      return { content: '[pass]' };
    });
    const stdin = new PassThrough();
    const running = await run({
      argv: [],
      cwd: dir,
      env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', HEALTH_PORT: '0' },
      stdin,
      stdout: new PassThrough(),
      sandbox: async () => new FakeSandbox(() => ({ output: '42 sales.csv\n', exitCode: 0 })),
    });
    try {
      const port = running.healthPort;
      expect(port).toBeGreaterThan(0);
      stdin.write('count the rows please\n');
      stdin.end('@data break\n');
      await running.console?.finished;

      const healthz = await get(port, '/healthz');
      expect(healthz).toEqual({
        status: 200,
        type: 'application/json',
        body: JSON.stringify({ status: 'ok', adapters: { console: true }, store: true }),
      });

      const { status, type, body } = await get(port, '/metrics');
      expect(status).toBe(200);
      expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(sample(body, 'roundtable_messages_in_total{platform="console"}')).toBe(2);
      // Three agent replies and the bridge's own error line.
      expect(sample(body, 'roundtable_messages_out_total{platform="console"}')).toBe(4);
      expect(sample(body, 'roundtable_agent_turns_total{agent="code"}')).toBe(1);
      expect(sample(body, 'roundtable_agent_turns_total{agent="data"}')).toBe(3);
      expect(sample(body, 'roundtable_passes_total{agent="code"}')).toBeUndefined();
      expect(sample(body, 'roundtable_tool_runs_total{agent="code",tool="bash"}')).toBe(1);
      expect(sample(body, 'roundtable_sandbox_exec_seconds_count{outcome="ok"}')).toBe(1);
      expect(sample(body, 'roundtable_llm_calls_total{agent="code"}')).toBe(2);
      expect(sample(body, 'roundtable_llm_errors_total{agent="data"}')).toBe(1);
      expect(sample(body, 'roundtable_llm_call_seconds_count{agent="data"}')).toBe(3);
      expect(sample(body, 'roundtable_llm_tokens_total{agent="code",kind="output"}')).toBeGreaterThan(0);
      // A failed call is one line, not a hand-back.
      expect(sample(body, 'roundtable_hand_backs_total{reason="agent error"}')).toBeUndefined();
      expect(body).toContain('roundtable_process_resident_memory_bytes');
      expect((await get(port, '/nope')).status).toBe(404);
    } finally {
      await running.shutdown();
    }
  });

  it('counts passes and /pass hand-backs', async () => {
    agentFile('data', 'activation: always');
    llm.respond(() => ({ content: '[pass]' }));
    const stdin = new PassThrough();
    const running = await run({
      argv: [],
      cwd: dir,
      env: { OPENAI_BASE_URL: llm.baseURL, HEALTH_PORT: '0' },
      stdin,
      stdout: new PassThrough(),
      sandbox: async () => new FakeSandbox(),
    });
    try {
      const before = await get(running.healthPort, '/metrics');
      const passes = async () =>
        (sample((await get(running.healthPort, '/metrics')).body, 'roundtable_passes_total{agent="data"}') ?? 0) -
        (sample(before.body, 'roundtable_passes_total{agent="data"}') ?? 0);
      stdin.write('hello\n');
      // A piped /pass stops a turn under way: it is sent once the agent has passed.
      await vi.waitFor(async () => expect(await passes()).toBe(1), { timeout: 30_000, interval: 50 });
      stdin.end('/pass\n');
      await running.console?.finished;
      const after = (await get(running.healthPort, '/metrics')).body;
      const delta = (series: string) => (sample(after, series) ?? 0) - (sample(before.body, series) ?? 0);
      expect(delta('roundtable_passes_total{agent="data"}')).toBe(1);
      expect(delta('roundtable_hand_backs_total{reason="/pass"}')).toBe(1);
    } finally {
      await running.shutdown();
    }
  });

  it('answers 503 and names the adapter when a platform connection is down', async () => {
    const discord: FakeDiscord = await startFakeDiscord({ bots: [{ token: 'tok-data', name: 'data-bot' }] });
    const slack: FakeSlack = await startFakeSlack();
    const app = slack.addApp('code');
    agentFile('data', 'discord: { token_env: DATA_TOKEN }');
    agentFile('code', 'slack: { bot_token_env: CODE_BOT, app_token_env: CODE_APP }');
    const running = await run({
      argv: [],
      cwd: dir,
      env: {
        OPENAI_BASE_URL: llm.baseURL,
        HEALTH_PORT: '0',
        LOG_LEVEL: 'silent',
        DATA_TOKEN: 'tok-data',
        CODE_BOT: app.botToken,
        CODE_APP: app.appToken,
        DISCORD_API_URL: discord.apiURL,
        SLACK_API_URL: slack.apiUrl,
      },
      sandbox: async () => new FakeSandbox(),
    });
    try {
      const up = await get(running.healthPort, '/healthz');
      expect(up.status).toBe(200);
      expect(JSON.parse(up.body)).toEqual({ status: 'ok', adapters: { discord: true, slack: true }, store: true });

      await discord.close();
      // discord.js starts reconnecting at once; poll until the health check notices.
      let down = await get(running.healthPort, '/healthz');
      while (down.status !== 503) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        down = await get(running.healthPort, '/healthz');
      }
      expect(JSON.parse(down.body)).toEqual({
        status: 'unavailable',
        adapters: { discord: false, slack: true },
        store: true,
      });
    } finally {
      await running.shutdown();
      await slack.close();
    }
  });

  it('reports a store it cannot write as down', async () => {
    const store = openStore(path.join(dir, 'store.db'));
    expect(await storeWritable(store)).toBe(true);
    await store.close();
    // A closed store (as after its disk went away) takes no write.
    expect(await storeWritable(store)).toBe(false);
  });

  it('reports in /healthz which replica this is and how many room leases it holds, with bridges sharing the store', async () => {
    let held = 2;
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      adapters: [],
      store: { ping: async () => {} },
      leases: () => ({ replica: 'r1', held }),
      logger: silentLogger(),
    });
    try {
      expect(JSON.parse((await get(server.port, '/healthz')).body)).toEqual({
        status: 'ok',
        adapters: {},
        store: true,
        replica: 'r1',
        leases: 2,
      });
      held = 0;
      expect(JSON.parse((await get(server.port, '/healthz')).body)).toMatchObject({ leases: 0 });
    } finally {
      await server.close();
    }
  });
});
