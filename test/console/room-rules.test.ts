/**
 * How the room decides who speaks, in the terminal room (piped input), judged only by what it prints and what the
 * model was asked.
 * Each of these broke before the room became one decision (when the rules were spread over the shell):
 * - a rally between two always agents: with the human naming @ping it stops after three messages, no hand-back.
 * - with BATCHING=on, piped lines get no answer: no model call, and the process exits 0 right after the first line.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { type FakeOpenAI, perAgent, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { agentOf, newestOf } from '../helpers/harness.js';

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
  dir = mkdtempSync(path.join(tmpdir(), 'rt-console-rules-'));
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

/** Runs the terminal room in-process with piped input; returns the lines it printed after its banner. */
async function room(lines: string[], env: Record<string, string> = {}): Promise<string[]> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
  });
  const running = await run({
    argv: [],
    cwd: dir,
    env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', DATA_DIR: path.join(dir, 'data'), ...env },
    stdin,
    stdout,
    sandbox: async () => new FakeSandbox(),
  });
  stdin.end(`${lines.join('\n')}\n`);
  await running.console?.finished;
  await running.shutdown();
  return printed.split('\n').slice(1, -1);
}

/**
 * ping and pong each answer the other by name with a new line every time (numbered in the order posted), and
 * pass when the newest message they see is their own: there is nothing of the other's to answer.
 */
function rallyPlayer(): (r: RecordedRequest) => { content: string } {
  let shots = 0;
  return (r) => {
    const agent = agentOf(r);
    if (newestOf(r).startsWith(`[@${agent}]:`)) return { content: '[pass]' };
    return { content: `@${agent === 'ping' ? 'pong' : 'ping'} shot ${++shots} from ${agent}` };
  };
}

describe('a rally between two always agents in the terminal room', () => {
  async function play(opening: string): Promise<string[]> {
    rmSync(path.join(dir, 'data'), { recursive: true, force: true });
    llm.respond(rallyPlayer());
    return room([opening], { TURN_LIMIT: '6' });
  }

  it('runs to TURN_LIMIT and hands back when the human names one of them, as it does unnamed', async () => {
    agentFile('ping', 'activation: always');
    agentFile('pong', 'activation: always');
    const unnamed = await play('serve the rally');
    const named = await play('@ping serve the rally');
    const agentLines = [
      '[@ping]: @pong shot 1 from ping',
      '[@pong]: @ping shot 2 from pong',
      '[@ping]: @pong shot 3 from ping',
      '[@pong]: @ping shot 4 from pong',
      '[@ping]: @pong shot 5 from ping',
      '[@pong]: @ping shot 6 from pong',
      expect.stringMatching(/^\[system\]: @human 6 agent messages in a row/),
    ];
    expect(unnamed).toEqual(['[@user]: serve the rally', ...agentLines]);
    expect(named).toEqual(['[@user]: @ping serve the rally', ...agentLines]);
  });
});

describe('npm start -- --console with BATCHING=on', () => {
  it('answers every piped line before it exits 0', { timeout: 60_000 }, async () => {
    // Batching applies: two always agents on one endpoint and model (asked in one call), and @m.
    for (const name of ['a', 'b']) {
      writeFileSync(
        path.join(dir, 'agents', `${name}.md`),
        `---\nname: ${name}\nmodel: shared\nactivation: always\n---\nYou are ${name}.\n`,
      );
    }
    agentFile('m', 'activation: mention');
    llm.respond(
      perAgent((view) => {
        if (view.agent === 'm') return view.situation.includes('asked for your action') ? 'Hi, user.' : '[pass]';
        if (view.agent === 'a' && view.newest.includes('good morning team')) return 'Good morning!';
        return '[pass]';
      }),
    );
    const child = exec(TSX, [MAIN, '--console'], {
      cwd: dir,
      env: {
        ...process.env,
        OPENAI_BASE_URL: llm.baseURL,
        LLM_MAX_RETRIES: '0',
        SANDBOX_IMAGE: 'absent-image:none',
        BATCHING: 'on',
        // Long enough that only waiting for the batched answer, not other start-up work, keeps the process up.
        BATCH_TICK_MS: '3000',
      },
      timeout: 60_000,
    });
    child.child.stdin?.end('good morning team\n@m hi there\n');
    const { stdout } = await child;
    expect(child.child.exitCode).toBe(0);
    expect(stdout.split('\n').slice(1)).toEqual([
      '[@user]: good morning team',
      '[@a]: Good morning!',
      '[@user]: @m hi there',
      '[@m]: Hi, user.',
      '',
    ]);
  });
});
