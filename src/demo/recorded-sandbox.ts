import { SandboxError } from '../errors.js';
import type { ExecResult, Sandbox } from '../ports.js';
import { DEMO_COMMAND } from './player.js';

/** What DEMO_COMMAND prints on sandbox/demo-workspace/sales.csv (a test checks it against the file). */
export const RECORDED_OUTPUT = 'Acme Corp,23202.02\nStark Industries,14271.82\nGlobex,10005.38\nTOTAL,71804.15\n';

/**
 * The demo's stand-in when Docker is not available: it replays the recorded output of the demo's
 * one command, and says plainly that anything else needs the real sandbox.
 */
export class RecordedSandbox implements Sandbox {
  constructor(private readonly reason: string) {}

  async exec(_channelKey: string, command: string): Promise<ExecResult> {
    if (command === DEMO_COMMAND) return { output: RECORDED_OUTPUT, exitCode: 0, timedOut: false };
    throw new SandboxError(`this demo has no Docker sandbox (${this.reason}); only its scripted command is replayed`);
  }

  async describe(): Promise<string> {
    return `recorded demo output (Docker unavailable: ${this.reason})`;
  }

  async close(): Promise<void> {}
}
