/**
 * The bridge as its own process through test/reliability/kill-child.ts (`npm start` without Docker: the agents of
 * the process tests run no commands), for tests that kill, pause and resume it: it is `ready` once it runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface BridgeChild {
  readonly proc: ChildProcess;
  /** True once the bridge runs; false when it exited first. */
  readonly ready: Promise<boolean>;
  /** Whether it has exited. */
  exited(): boolean;
  /** Kills it with `signal` (SIGKILL by default) and resolves once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** What it printed to stderr (its start-up errors). */
  stderr(): string;
}

const root = path.resolve(import.meta.dirname, '../..');
const script = path.join(root, 'test', 'reliability', 'kill-child.ts');

export function startBridgeChild(env: NodeJS.ProcessEnv): BridgeChild {
  const proc = spawn(process.execPath, ['--import', 'tsx', script], {
    env,
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  proc.stderr?.on('data', (data: Buffer) => {
    errors += data.toString();
  });
  const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const ready = new Promise<boolean>((resolve) => {
    proc.stdout?.on('data', (data: Buffer) => {
      if (data.toString().includes('ready')) resolve(true);
    });
    void gone.then(() => resolve(false));
  });
  return {
    proc,
    ready,
    exited: () => proc.exitCode !== null || proc.signalCode !== null,
    stop: async (signal = 'SIGKILL') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await gone;
    },
    stderr: () => errors,
  };
}

/**
 * Writes the agent the process tests run in `dir/agents`: `code`, the control bot on Discord and Slack, answering
 * when mentioned; returns that folder.
 */
export function writeAnsweringAgent(dir: string): string {
  const agents = path.join(dir, 'agents');
  mkdirSync(agents);
  writeFileSync(
    path.join(agents, 'code.md'),
    [
      '---',
      'name: code',
      'model: fake',
      'activation: mention',
      'tools: []',
      'discord: { token_env: DISCORD_TOKEN_CODE, control: true }',
      'slack: { bot_token_env: SLACK_BOT_TOKEN_CODE, app_token_env: SLACK_APP_TOKEN_CODE, control: true }',
      '---',
      'You answer questions.',
    ].join('\n'),
  );
  return agents;
}
