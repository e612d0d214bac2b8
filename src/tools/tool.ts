import type { ChatCompletionTool } from '../llm/client.js';
import type { Sandbox } from '../ports.js';

/** What a tool may use while it runs for one agent in one room. */
export interface ToolContext {
  readonly agent: string;
  /** `${platform}:${channel}`: the sandbox and workspace key. */
  readonly channelKey: string;
  readonly sandbox: Sandbox;
  readonly commandTimeoutMs: number;
  readonly signal: AbortSignal;
}

export interface ToolResult {
  /** What the model reads back. */
  readonly output: string;
  /** How the run is shown and remembered (`[ran: ...]`): the shell command, or the arguments. */
  readonly input: string;
}

export interface Tool {
  readonly name: string;
  readonly definition: ChatCompletionTool;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolResult>;
}
