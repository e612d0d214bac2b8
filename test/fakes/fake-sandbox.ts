import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ExecResult, Sandbox } from '../../src/ports.js';

export type ExecHandler = (channelKey: string, command: string) => Partial<ExecResult> | Promise<Partial<ExecResult>>;

/** In-memory twin of the Docker sandbox: records commands, answers through a handler. */
export class FakeSandbox implements Sandbox {
  readonly calls: Array<{ channelKey: string; command: string; timeoutMs: number }> = [];
  readonly resets: Array<{ channelKey: string; wipeWorkspace: boolean }> = [];
  closed = false;
  /** Present with a `workspaces` folder: each channel's workspace is a folder below it (no template). */
  readonly workspaceDir?: (channelKey: string) => string;
  readonly ensureWorkspace?: (channelKey: string) => Promise<string>;
  /** Present with an `engine` identity: the engine it says runs its containers. */
  readonly engine?: () => Promise<string | undefined>;

  constructor(
    private handler: ExecHandler = () => ({ output: '', exitCode: 0 }),
    options: { workspaces?: string; engine?: string } = {},
  ) {
    const { engine } = options;
    if (engine !== undefined) this.engine = async () => engine;
    const root = options.workspaces;
    if (root) {
      const dirOf = (channelKey: string) => path.join(root, channelKey.replace(/[^A-Za-z0-9]+/g, '-'));
      this.workspaceDir = dirOf;
      this.ensureWorkspace = async (channelKey) => {
        await mkdir(dirOf(channelKey), { recursive: true });
        return dirOf(channelKey);
      };
    }
  }

  onExec(handler: ExecHandler): void {
    this.handler = handler;
  }

  async exec(channelKey: string, command: string, options: { timeoutMs: number }): Promise<ExecResult> {
    this.calls.push({ channelKey, command, timeoutMs: options.timeoutMs });
    const result = await this.handler(channelKey, command);
    return { output: result.output ?? '', exitCode: result.exitCode ?? 0, timedOut: result.timedOut ?? false };
  }

  async describe(channelKey: string): Promise<string> {
    const last = [...this.calls].reverse().find((call) => call.channelKey === channelKey);
    return last ? `fake sandbox, last command: ${last.command}` : 'fake sandbox, absent';
  }

  async reset(channelKey: string, options?: { wipeWorkspace?: boolean }): Promise<void> {
    this.resets.push({ channelKey, wipeWorkspace: options?.wipeWorkspace ?? false });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
