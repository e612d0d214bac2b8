import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DEMO_QUESTION, demoReply } from '../../src/demo/player.js';
import { demo } from '../../src/demo.js';
import { dockerSandbox, run } from '../../src/main.js';
import { startFakeOpenAI } from '../fakes/openai-server/index.js';
import { requireDocker, runDockerTests, sandboxImage } from './docker-harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe.runIf(runDockerTests)('the terminal room with the real Docker sandbox', () => {
  requireDocker();
  it('plays the example session: @code reads the template CSV with python in its container', async () => {
    const llm = await startFakeOpenAI({ responder: demoReply });
    const dataDir = mkdtempSync(path.join(tmpdir(), 'rt-e2e-docker-'));
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let printed = '';
    stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    try {
      const running = await run({
        argv: ['--console'],
        cwd: ROOT,
        env: {
          AGENTS_DIR: path.join(ROOT, 'agents'),
          DATA_DIR: dataDir,
          SANDBOX_IMAGE: sandboxImage,
          OPENAI_BASE_URL: llm.baseURL,
          LLM_MAX_RETRIES: '0',
          SANDBOX_TEMPLATE_DIR: path.join(ROOT, 'sandbox', 'demo-workspace'),
        },
        stdin,
        stdout,
        sandbox: dockerSandbox,
      });
      stdin.end(`${DEMO_QUESTION}\n`);
      await running.console?.finished;
      await running.shutdown();
    } finally {
      await llm.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(printed).toMatch(
      /\[@code\] running: python3 -c .*\n\[result\]: Acme Corp,23202\.02\nStark Industries,14271\.82\nGlobex,10005\.38\nTOTAL,71804\.15\n/,
    );
    expect(printed).toContain(
      '[@data]: Our top 3 customers: Acme Corp (23,202), Stark Industries (14,272), Globex (10,005).',
    );
    expect(printed).not.toContain('[ERROR');
  }, 120_000);

  it('plays the demo on recorded output when only the image is missing, and says so', async () => {
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    await demo(out, { ...process.env, SANDBOX_IMAGE: 'roundtable-never-built:none' });
    expect(printed).toContain(
      "[system]: DEMO: @code's commands run in: recorded command output, because the sandbox image is missing (npm run sandbox:build).\n",
    );
    expect(printed).toContain('[@data]: Our top 3 customers: Acme Corp (23,202)');
  }, 120_000);
});
