/**
 * `Sandbox.spawn` backed by a host child process: the same contract as the sandbox's long-lived processes (stdin and
 * stdout as byte streams, stderr apart), so the MCP transport over them is tested without Docker.
 */
import { spawn } from 'node:child_process';
import type { ProcessSpec, SandboxProcess } from '../../src/ports.js';

export interface HostProcess extends SandboxProcess {
  /** Everything written to the process's stdin, as text (what went on the wire). */
  readonly written: string[];
  readonly pid: number | undefined;
}

/** Starts `spec` on the host; rejects when the command cannot be started. */
export function hostProcess(spec: ProcessSpec): Promise<HostProcess> {
  const child = spawn(spec.command, [...spec.args], {
    env: { ...process.env, ...spec.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(spec.cwd ? { cwd: spec.cwd } : {}),
  });
  const written: string[] = [];
  let exited: number | null | undefined;
  const exits: Array<(code: number | null) => void> = [];
  child.on('exit', (code) => {
    exited = code;
    for (const listener of exits.splice(0)) listener(code);
  });
  child.stdin.on('error', () => {});
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () =>
      resolve({
        written,
        pid: child.pid,
        write(chunk) {
          written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
          if (!child.stdin.destroyed) child.stdin.write(chunk);
        },
        onStdout: (listener) => child.stdout.on('data', listener),
        onStderr: (listener) => child.stderr.on('data', listener),
        onExit(listener) {
          if (exited !== undefined) listener(exited);
          else exits.push(listener);
        },
        kill() {
          if (exited !== undefined) return Promise.resolve();
          return new Promise<void>((done) => {
            exits.push(() => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 2000).unref();
          });
        },
      }),
    );
  });
}
