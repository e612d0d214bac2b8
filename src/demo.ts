/**
 * `npm run demo`: the terminal room with the example agents against a bundled local
 * OpenAI-compatible server that plays the example session. No API key, no platform tokens.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { startLocalModel } from './demo/local-model.js';
import { DEMO_QUESTION, demoReply } from './demo/player.js';
import { RecordedSandbox } from './demo/recorded-sandbox.js';
import { describeError, SandboxError } from './errors.js';
import { dockerSandbox, run } from './main.js';
import { packageRoot } from './paths.js';
import type { Sandbox } from './ports.js';

const ROOT = packageRoot();

/** Why the demo replays recorded output: the words a user can act on. */
export function replayReason(error: unknown): string {
  if (error instanceof SandboxError && error.problem === 'image') {
    return 'the sandbox image is missing (npm run sandbox:build)';
  }
  if (error instanceof SandboxError && error.problem === 'engine') return 'Docker is not available';
  return `the sandbox failed (${describeError(error)})`;
}

export async function demo(
  output: NodeJS.WritableStream = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const llm = await startLocalModel(demoReply);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roundtable-demo-'));
  const stdin = new PassThrough();
  let sandboxNote = 'Docker sandbox';
  try {
    const running = await run({
      argv: ['--console'],
      cwd: ROOT,
      env: {
        ...env,
        AGENTS_DIR: path.join(ROOT, 'agents'),
        DATA_DIR: dataDir,
        OPENAI_BASE_URL: llm.baseURL,
        OPENAI_API_KEY: 'demo',
        SANDBOX_TEMPLATE_DIR: path.join(ROOT, 'sandbox', 'demo-workspace'),
        LOG_FILE: path.join(dataDir, 'roundtable.log'),
      },
      stdin,
      stdout: output,
      sandbox: async (config, logger): Promise<Sandbox> => {
        const docker = await dockerSandbox(config, logger);
        try {
          await docker.exec('console:main', 'true', { timeoutMs: 60_000 });
          return docker;
        } catch (error) {
          await docker.close().catch(() => {});
          sandboxNote = `recorded command output, because ${replayReason(error)}`;
          return new RecordedSandbox(describeError(error));
        }
      },
      banner: 'DEMO: a local scripted model plays the example session (no API key used).',
    });
    running.console?.print(`[system]: DEMO: @code's commands run in: ${sandboxNote}.`);
    stdin.end(`${DEMO_QUESTION}\n`);
    await running.console?.finished;
    await running.shutdown();
    running.console?.print('[system]: DEMO: end of the example session. Run `npm start` to talk to real models.');
  } finally {
    await llm.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  demo().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${describeError(error)}\n`);
      process.exit(1);
    },
  );
}
