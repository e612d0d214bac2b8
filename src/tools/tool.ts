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
  /** The messaging actions, bound to this agent and room (absent where there is no bridge). */
  readonly messaging?: Messaging | undefined;
}

/** What the messaging tools ask of the bridge. Each returns the text the model reads back. */
export interface Messaging {
  sendChannelMessage(input: { channel: string; message: string; requestReply: string[] }): Promise<string>;
  sendDm(input: { to: string; message: string; requestReply: boolean }): Promise<string>;
  chatRequest(input: { to: string; reason: string }): Promise<string>;
  chatResponse(input: { requestId: number; accept: boolean }): Promise<string>;
  chat(input: { to: string; message: string }): Promise<string>;
}

export interface ToolResult {
  /** What the model reads back. */
  readonly output: string;
  /** How the run is shown and remembered (`[ran: ...]`): the shell command, or the arguments. */
  readonly input: string;
  /** The agent's turn ends with this call (nothing more is posted in the room). */
  readonly endTurn?: boolean;
}

export interface Tool {
  readonly name: string;
  readonly definition: ChatCompletionTool;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolResult>;
}
