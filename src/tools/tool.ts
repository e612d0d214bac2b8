import { z } from 'zod';
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
  /** This agent's knowledge store (absent where there is no store). */
  readonly memory?: AgentMemory | undefined;
  /** The spending limits, for tools with a price per call (absent where nothing is counted). */
  readonly spend?: ToolSpend | undefined;
}

/** A priced call's side of the spending limits, bound to an agent and a room. */
export interface ToolSpend {
  /** Holds `nano` (nano-dollars) against the bridge's, room's and agent's limits; rejects with the limit it would cross. */
  hold(nano: number, signal: AbortSignal): Promise<{ settle(): Promise<void>; release(): Promise<void> }>;
}

/** What `remember` and `forget` ask of the store, bound to one agent. */
export interface AgentMemory {
  has(key: string): Promise<boolean>;
  count(): Promise<number>;
  remember(key: string, value: string): Promise<void>;
  /** True when there was something to forget. */
  forget(key: string): Promise<boolean>;
}

/** What the messaging tools ask of the bridge. Each returns the text the model reads back, or throws why not. */
export interface Messaging {
  sendChannelMessage(input: { channel: string; message: string; requestReply: string[] }): Promise<string>;
  sendDm(input: { to: string; message: string; requestReply: boolean }): Promise<string>;
  chatRequest(input: { to: string; reason: string }): Promise<string>;
  chatResponse(input: { requestId: number; accept: boolean }): Promise<string>;
  chat(input: { to: string; message: string }): Promise<string>;
  /** Who is at the table (agents, recently active humans) and the pending chat requests. */
  look(): Promise<string>;
}

/** A messaging action refuses with a reason the model can act on (not allowed here, no such agent...). */
export class ActionRefused extends Error {}

/**
 * How a tool run ended. The loop decides on `status`; `output` is only what the model reads back.
 * - ok: it did what was asked (per-item problems may still be listed in the output);
 * - refused: it would not run (bad arguments, not allowed here) — nothing happened;
 * - failed: it tried and something broke (sandbox down, platform error).
 */
export type ToolStatus = 'ok' | 'refused' | 'failed';

export interface ToolResult {
  readonly status: ToolStatus;
  /** What the model reads back. */
  readonly output: string;
  /** How the run is shown and remembered (`[ran: ...]`): the shell command, or the arguments. */
  readonly input: string;
  /** The agent's turn ends with this call (nothing more is posted in the room). */
  readonly endTurn?: boolean;
}

export const ok = (input: string, output: string, extra: { endTurn?: boolean } = {}): ToolResult => ({
  status: 'ok',
  input,
  output,
  ...extra,
});
export const refused = (input: string, reason: string): ToolResult => ({
  status: 'refused',
  input,
  output: `[ERROR: ${reason}]`,
});
export const failed = (input: string, error: string): ToolResult => ({
  status: 'failed',
  input,
  output: `[ERROR: ${error}]`,
});

export interface Tool {
  readonly name: string;
  readonly definition: ChatCompletionTool;
  /** How a call is shown before it has ended (`[ran: …]`, a crash's note): the shell command; absent: its arguments. */
  inputOf?(args: unknown): string;
  /**
   * A call cut by a restart may be made again (an MCP tool marked `idempotentHint`); otherwise it is reported as cut
   * and not repeated.
   */
  readonly idempotent?: boolean;
  /** Validates the model's arguments against the tool's schema, then runs it. */
  run(args: unknown, context: ToolContext): Promise<ToolResult>;
}

/**
 * Plain JSON Schema for a tool's parameters, generated from its zod schema. Strict servers reject
 * meta keys: Gemini's OpenAI endpoint refuses `$schema`, so it is left out.
 */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}

/**
 * The first problem zod found, as one short line. The schemas' own messages are whole sentences
 * ("each path must be a string"); zod's defaults ("Invalid input: expected string") get the path.
 */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid arguments';
  const isDefault = /^(Invalid|Too (big|small)|Unrecognized)/.test(issue.message);
  return isDefault && issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/**
 * A tool from a zod schema: the JSON schema the model sees is generated from it, and the arguments
 * are validated against it before `run` sees them (a bad call is refused with zod's first issue).
 */
export function defineTool<S extends z.ZodObject>(spec: {
  readonly name: string;
  readonly description: string;
  readonly schema: S;
  /** How a call is shown before it has ended, and when its arguments did not parse. */
  readonly inputOf?: (args: unknown) => string;
  run(args: z.output<S>, context: ToolContext): Promise<ToolResult>;
}): Tool {
  const inputOf = spec.inputOf;
  return {
    name: spec.name,
    ...(inputOf ? { inputOf } : {}),
    definition: {
      type: 'function',
      function: { name: spec.name, description: spec.description, parameters: jsonSchemaOf(spec.schema) },
    },
    run(args, context) {
      const parsed = spec.schema.safeParse(args ?? {});
      if (!parsed.success) {
        return Promise.resolve(refused(spec.inputOf?.(args) ?? spec.name, firstIssue(parsed.error)));
      }
      return spec.run(parsed.data, context);
    },
  };
}
