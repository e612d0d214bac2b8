/**
 * Two bridges (replicas a and b) on one Postgres store, each with the terminal room open: each terminal is its own
 * room. A question typed in one is answered in that terminal only, `/status` works in both, and a replica started
 * again under its REPLICA_ID finds its terminal room's history. A throw-away cluster for this file; outside CI,
 * without Postgres, one line and skipped.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { type Running, run } from '../../src/main.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { newestOf } from '../helpers/harness.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';

const pgSuite = migratedPostgres();

interface Terminal {
  readonly running: Running;
  type(line: string): void;
  printed(): string;
  close(): Promise<void>;
}

describe.runIf(pgSuite.plan.run)('the terminal room in two replicas sharing one Postgres', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-terminal-replicas-'));
  let llm: FakeOpenAI | undefined;
  const open: Terminal[] = [];
  afterAll(async () => {
    for (const terminal of open) await terminal.close().catch(() => undefined);
    await llm?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is each process's own room: answered in the terminal it was typed in, /status in both", async () => {
    const { url } = await pgSuite.cluster().createDatabase({ from: pgSuite.migrated() });
    mkdirSync(path.join(dir, 'agents'));
    writeFileSync(
      path.join(dir, 'agents', 'data.md'),
      '---\nname: data\nmodel: m\nactivation: always\n---\nYou are data.\n',
    );
    llm = await startFakeOpenAI();
    llm.respond((request) => ({ content: `re: ${newestOf(request).replace(/^\[@[^\]]+\]: /, '')}` }));

    /** The terminal room of replica `replica`, its input piped (a line at a time, as typed). */
    const terminal = async (replica: string): Promise<Terminal> => {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      let printed = '';
      stdout.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
      });
      const env = {
        DATABASE_URL: url,
        REPLICA_ID: replica,
        OPENAI_BASE_URL: llm?.baseURL ?? '',
        LLM_MAX_RETRIES: '0',
        LOG_LEVEL: 'silent',
        DATA_DIR: path.join(dir, `data-${replica}`),
      };
      const running = await run({ argv: [], cwd: dir, env, stdin, stdout, sandbox: async () => new FakeSandbox() });
      const opened: Terminal = {
        running,
        type: (line) => stdin.write(`${line}\n`),
        printed: () => printed,
        close: async () => {
          stdin.end();
          await running.console?.finished;
          await running.shutdown();
        },
      };
      open.push(opened);
      return opened;
    };
    const shows = async (t: Terminal, text: string) => {
      const deadline = Date.now() + 60_000;
      while (!t.printed().includes(text)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for "${text}"; printed:\n${t.printed()}`);
        await sleep(20);
      }
    };

    const a = await terminal('a');
    a.type('question from a');
    await shows(a, '[@data]: re: question from a');
    const b = await terminal('b');
    b.type('/status');
    b.type('question from b');
    await shows(b, '[@data]: re: question from b');
    a.type('again from a');
    await shows(a, '[@data]: re: again from a');

    expect(b.printed()).toContain('Served by: replica b');
    expect(b.printed()).not.toContain('question from a');
    expect(a.printed()).not.toContain('question from b');
    // Each model call saw its own terminal's conversation only.
    const seen = llm.requests.map((request) => JSON.stringify(request.body));
    expect(seen.filter((body) => body.includes('question from a') && body.includes('question from b'))).toEqual([]);

    // Replica a started again under its REPLICA_ID: its own room's history is there.
    await a.close();
    const again = await terminal('a');
    await shows(again, '4 messages of history loaded for this room.');
  }, 180_000);
});
