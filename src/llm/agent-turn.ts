import type { Context } from '@opentelemetry/api';
import { KNOWN_TOOLS } from '../config/index.js';
import { describeError, LlmError } from '../errors.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';
import type { ToolRun } from '../room/types.js';
import { SpendLimitError } from '../spend/limits.js';
import { failed, refused, type Tool, type ToolContext, type ToolResult } from '../tools/tool.js';
import { tracePrompt } from '../trace/content.js';
import { traceTool } from '../trace/tool.js';
import type { TurnBudget } from './turn-budget.js';
import type { CallMeter, ChatCompletionMessageParam, LlmClient, LlmResponse } from './types.js';
import { freshBlockId, untrustedBlock } from './untrusted.js';
import type { LlmUsage } from './usage.js';

export interface TurnInput {
  readonly client: LlmClient;
  readonly model: string;
  readonly temperature?: number | undefined;
  readonly messages: ChatCompletionMessageParam[];
  readonly tools: readonly Tool[];
  readonly toolContext: ToolContext;
  /** seed: MAX_TOOL_ROUNDS, default 25. */
  readonly maxRounds: number;
  /** Called after each tool run (the terminal room prints it). */
  readonly onToolRun?: ((run: ToolRun) => void) | undefined;
  /** Called with each round's text so far while it streams in (a new round starts again from empty). */
  readonly onText?: ((textSoFar: string) => void) | undefined;
  /** Keeps every call within the agent's context budget (tool results clipped, earlier rounds shortened). */
  readonly budget?: TurnBudget | undefined;
  /** Called with what the server reported for each call. */
  readonly onUsage?: ((usage: LlmUsage) => void) | undefined;
  /** Debug lines for each model call and tool run; unexpected tool errors at error level. */
  readonly log?: Logger | undefined;
  /** Every call's output cap (`max_output_tokens`). */
  readonly maxOutputTokens?: number | undefined;
  /** Spending limits: each call is held before it is made. */
  readonly meter?: CallMeter | undefined;
  /** The turn's span, when it is traced: the prompt and the tool runs go on it and below it. */
  readonly trace?: Context | undefined;
}

export interface TurnOutput {
  readonly text: string;
  readonly toolRuns: readonly ToolRun[];
  /** True when the model was still calling tools after maxRounds rounds. */
  readonly roundLimitHit: boolean;
}

function parseArguments(raw: string): Record<string, unknown> | string {
  if (!raw.trim()) return {};
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : 'arguments must be a JSON object';
  } catch {
    return 'arguments are not valid JSON';
  }
}

/** Runs one tool call; the one place where a tool's unexpected error is caught and logged. */
async function runTool(input: TurnInput, call: { name: string; arguments: string }): Promise<ToolResult> {
  const tool = input.tools.find((t) => t.name === call.name);
  if (!tool) return refused(call.arguments, `there is no tool named "${call.name}"`);
  const args = parseArguments(call.arguments);
  if (typeof args === 'string') return refused(call.arguments, args);
  const started = Date.now();
  let result: ToolResult;
  try {
    result = await tool.run(args, input.toolContext);
  } catch (error) {
    input.toolContext.signal.throwIfAborted();
    // A priced call a spending limit refuses ends the turn as a model call's refusal does.
    if (error instanceof SpendLimitError) throw error;
    input.log?.error({ err: error, agent: input.toolContext.agent, tool: call.name }, 'tool failed unexpectedly');
    result = failed(call.arguments, describeError(error));
  }
  input.log?.debug(
    {
      agent: input.toolContext.agent,
      room: input.toolContext.channelKey,
      tool: call.name,
      status: result.status,
      ms: Date.now() - started,
      ...exitCodeOf(result),
    },
    'tool run',
  );
  return result;
}

/** The exit code a bash run reported, for the debug line. */
function exitCodeOf(result: ToolResult): { exitCode?: number } {
  if (result.status !== 'ok') return {};
  const code = /\[exit code: (\d+)\]$/.exec(result.output)?.[1];
  return { exitCode: code === undefined ? 0 : Number(code) };
}

/**
 * The assistant message as it goes back with the tool results: the provider's reasoning state and thought
 * signatures included, which reasoning models need to carry on (DeepSeek, OpenRouter, Gemini).
 */
function assistantMessage(response: LlmResponse): ChatCompletionMessageParam {
  return {
    ...response.carry,
    role: 'assistant',
    content: response.content || null,
    tool_calls: response.toolCalls.map((call) => ({
      ...call.carry,
      id: call.id,
      type: 'function' as const,
      function: { name: call.name, arguments: call.arguments },
    })),
  };
}

/**
 * Nothing said is a failure the room should see, not a silent [pass]: reasoning alone, or an answer with no text
 * the client could read (a passing agent says `[pass]`). After the turn's tool runs an empty reply is the agent
 * done acting (a message sent elsewhere, a memory kept) with nothing to add.
 */
function nothingSaid(response: LlmResponse, acted: boolean): LlmError | undefined {
  if (response.content.trim()) return undefined;
  const cutOff = response.finishReason === 'length' ? ' (it reached its output limit)' : '';
  if (response.reasoning) return new LlmError(`the model returned only reasoning${cutOff}`);
  if (acted) return undefined;
  const why =
    response.finishReason && response.finishReason !== 'stop' ? ` (finish reason: ${response.finishReason})` : '';
  return new LlmError(`the model's reply had no text${why}`);
}

/**
 * The `tool` label of a run: a tool the bridge has, by name; an MCP tool `mcp`; any other name is `unknown` (a label per
 * invented name would grow the series without bound, one of them thousands of characters long).
 */
function toolLabel(name: string): string {
  if ((KNOWN_TOOLS as readonly string[]).includes(name)) return name;
  return name.includes('__') ? 'mcp' : 'unknown'; // an MCP server's tool: its own series say which (mcp_calls_total)
}

/** Call the model, run each tool call, append results, call again, until a reply has no tool calls. */
export async function runAgentTurn(input: TurnInput): Promise<TurnOutput> {
  const messages = [...input.messages];
  const toolRuns: ToolRun[] = [];
  const definitions = input.tools.map((tool) => tool.definition);
  tracePrompt(input.messages, input.trace);
  for (let round = 0; ; round++) {
    input.toolContext.signal.throwIfAborted();
    input.budget?.fit(messages);
    const started = Date.now();
    const response = await input.client.complete({
      model: input.model,
      messages,
      tools: definitions,
      temperature: input.temperature,
      signal: input.toolContext.signal,
      onText: input.onText,
      maxOutputTokens: input.maxOutputTokens,
      meter: input.meter,
    });
    if (response.usage) input.onUsage?.(response.usage);
    if (response.cutAtCap) {
      input.log?.warn(
        {
          agent: input.toolContext.agent,
          model: input.model,
          cap: input.maxOutputTokens,
          ...(response.outputOverrun !== undefined ? { reported: response.outputOverrun } : {}),
        },
        'the model endpoint ignored the output cap: its answer was cut at the cap and counted at it',
      );
    }
    input.log?.debug(
      {
        agent: input.toolContext.agent,
        model: input.model,
        ms: Date.now() - started,
        round,
        toolCalls: response.toolCalls.length,
        ...(response.usage
          ? { tokensIn: response.usage.input, tokensCached: response.usage.cached, tokensOut: response.usage.output }
          : {}),
      },
      'llm call',
    );
    if (response.toolCalls.length === 0) {
      const silent = nothingSaid(response, toolRuns.length > 0);
      if (silent) throw silent;
      return { text: response.content, toolRuns, roundLimitHit: false };
    }
    if (round >= input.maxRounds) return { text: response.content, toolRuns, roundLimitHit: true };

    messages.push(assistantMessage(response));
    let endTurn = false;
    for (const call of response.toolCalls) {
      input.toolContext.signal.throwIfAborted(); // /pass stops a batch of tool calls between two of them
      const result = await traceTool(call.name, () => runTool(input, call), input.trace, {
        room: input.toolContext.channelKey,
        agent: input.toolContext.agent,
      });
      const run: ToolRun = { tool: call.name, input: result.input, output: result.output };
      toolRuns.push(run);
      metrics.toolRuns.inc({ agent: input.toolContext.agent, tool: toolLabel(run.tool) });
      input.onToolRun?.(run);
      // Clipped before it enters the messages: one read_files answer can be hundreds of KB. What a tool returns is
      // data (a file, a command's output), never the room's people: it is marked so, under a fresh id.
      const block = untrustedBlock(`tool:${call.name}`, run.output, freshBlockId());
      const content = input.budget ? input.budget.clipResult(block) : block;
      messages.push({ role: 'tool', tool_call_id: call.id, content });
      if (result.endTurn) endTurn = true;
    }
    // An action that ends the turn (a private `chat` message): nothing more is said in the room.
    if (endTurn) return { text: '', toolRuns, roundLimitHit: false };
  }
}
