import { SandboxError } from '../errors.js';
import type { Sandbox } from '../ports.js';

/** Stands in when no sandbox could be built: every command answers why, in one line. */
export class UnavailableSandbox implements Sandbox {
  constructor(private readonly reason: string) {}
  async exec(): Promise<never> {
    throw new SandboxError(this.reason);
  }
  async describe(): Promise<string> {
    return `sandbox unavailable: ${this.reason}`;
  }
  async close(): Promise<void> {}
}
