import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
import { DEMO_QUESTION, demoReply } from '../../src/demo/player.js';
import { demo } from '../../src/demo.js';
import { dockerSandbox, run } from '../../src/main.js';
import { startFakeOpenAI } from '../fakes/openai-server/index.js';
import { until } from '../helpers/until.js';
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

  const BAD_NETWORK =
    'SANDBOX_NETWORK=bridgee: Docker says network bridgee not found ' +
    '(docker network ls lists the networks; none, the default, means no network)';

  it("names a misspelt SANDBOX_NETWORK and what Docker said at start-up, in @code's answer and in the room", async () => {
    const llm = await startFakeOpenAI({ responder: demoReply });
    const dataDir = mkdtempSync(path.join(tmpdir(), 'rt-e2e-network-'));
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
          SANDBOX_NETWORK: 'bridgee',
          OPENAI_BASE_URL: llm.baseURL,
          LLM_MAX_RETRIES: '0',
          SANDBOX_TEMPLATE_DIR: path.join(ROOT, 'sandbox', 'demo-workspace'),
        },
        stdin,
        stdout,
        sandbox: dockerSandbox,
      });
      stdin.write(`${DEMO_QUESTION}\n`);
      // Both come in their own time: the start-up check runs beside the room.
      await until(() => printed.includes(`[system]: warning: ${BAD_NETWORK}\n`) && printed.includes('[@data]: '));
      stdin.end();
      await running.console?.finished;
      await running.shutdown();
      expect(printed).toMatch(/\[@code\] running: python3 -c .*\n\[result\]: \[ERROR: (.*)\]\n/);
      expect(/\[result\]: \[ERROR: (.*)\]\n/.exec(printed)?.[1]).toBe(BAD_NETWORK);
      // What the model was given back, and so what @code answered with.
      expect(printed).toContain(
        `[@code]: @data here are the totals (customer,revenue), with the grand total last:\n[ERROR: ${BAD_NETWORK}]`,
      );
      // Logged at start-up and when the command failed; the log file is written in the background.
      const log = () => readFileSync(path.join(dataDir, 'roundtable.log'), 'utf8');
      await until(
        () =>
          log()
            .split('\n')
            .filter((line) => line.includes(BAD_NETWORK)).length >= 2,
      );
      // `docker ps -a` by the sandbox's labels: nothing was left, in any state.
      const left = await new Dockerode().listContainers({
        all: true,
        filters: { label: ['roundtable.project=roundtable', `roundtable.scope=${dataDir}`] },
      });
      expect(left).toEqual([]);
    } finally {
      await llm.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('leaves no container behind per demo run, also when SANDBOX_NETWORK is misspelt', async () => {
    // The demo makes its data folder under the temporary folder: one of our own tells its containers apart.
    const own = mkdtempSync(path.join(tmpdir(), 'rt-demo-runs-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = own;
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    try {
      for (const network of ['bridgee', 'bridgee', 'none']) {
        await demo(out, { ...process.env, SANDBOX_IMAGE: sandboxImage, SANDBOX_NETWORK: network });
      }
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(printed).toContain(
      `[system]: DEMO: @code's commands run in: recorded command output, because the sandbox failed (${BAD_NETWORK}).\n`,
    );
    expect(printed).toContain("[system]: DEMO: @code's commands run in: Docker sandbox.\n");
    const all = await new Dockerode().listContainers({
      all: true,
      filters: { label: ['roundtable.project=roundtable'] },
    });
    expect(all.filter((info) => info.Labels['roundtable.scope']?.startsWith(own))).toEqual([]);
    rmSync(own, { recursive: true, force: true });
  }, 180_000);

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
