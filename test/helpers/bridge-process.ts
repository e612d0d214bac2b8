/**
 * The built bridge as a child process (`node dist/src/main.js`), as `npm start`, a container or a
 * service manager runs it: what it prints, how it exits, how long it took.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { builtBridge } from './built-bridge.js';

export interface BridgeExit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

export interface BridgeProcess {
  readonly child: ChildProcess;
  /** What it has printed so far. */
  output(): { stdout: string; stderr: string };
  readonly exited: Promise<BridgeExit>;
}

/**
 * Starts the built bridge. `stdin`: 'ignore' is /dev/null (compose, nohup, systemd), 'pipe' a pipe
 * the test writes to, a number an open file. Killed after `timeoutMs` (the exit then says so).
 */
export function startBridgeProcess(options: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  args?: readonly string[];
  stdin?: 'ignore' | 'pipe' | number;
  uid?: number;
  gid?: number;
  timeoutMs?: number;
}): BridgeProcess {
  const spawnOptions: SpawnOptions = {
    cwd: options.cwd,
    env: options.env,
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
  };
  const started = Date.now();
  const child = spawn(process.execPath, [builtBridge(), ...(options.args ?? [])], spawnOptions);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => {
    stderr += `\n[killed after ${options.timeoutMs ?? 60_000} ms]`;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 60_000);
  const exited = new Promise<BridgeExit>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
  return { child, output: () => ({ stdout, stderr }), exited };
}
