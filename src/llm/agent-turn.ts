import { describeError } from '../errors.js';
import { metrics } from '../metrics.js';
import type { ToolRun } from '../room/types.js';
import type { Tool, ToolContext } from '../tools/tool.js';
import type { ChatCompletionMessageParam, LlmClient } from './client.js';

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

/** Call the model, run each tool call, append results, call again, until a reply has no tool calls. */
export async function runAgentTurn(input: TurnInput): Promise<TurnOutput> {
  const messages = [...input.messages];
  const toolRuns: ToolRun[] = [];
  const definitions = input.tools.map((tool) => tool.definition);
  for (let round = 0; ; round++) {
    input.toolContext.signal.throwIfAborted();
    const response = await input.client.complete({
      model: input.model,
      messages,
      tools: definitions,
      temperature: input.temperature,
      signal: input.toolContext.signal,
      onText: input.onText,
    });
    if (response.toolCalls.length === 0) return { text: response.content, toolRuns, roundLimitHit: false };
    if (round >= input.maxRounds) return { text: response.content, toolRuns, roundLimitHit: true };

    messages.push({
      role: 'assistant',
      content: response.content || null,
      tool_calls: response.toolCalls.map((call) => ({
        id: call.id,
        type: 'function' as const,
        function: { name: call.name, arguments: call.arguments },
      })),
    });
    let endTurn = false;
    for (const call of response.toolCalls) {
      input.toolContext.signal.throwIfAborted(); // /pass stops a batch of tool calls between two of them
      const tool = input.tools.find((t) => t.name === call.name);
      const args = parseArguments(call.arguments);
      let run: ToolRun;
      let ended = false;
      if (!tool) {
        run = { tool: call.name, input: call.arguments, output: `[ERROR: there is no tool named "${call.name}"]` };
      } else if (typeof args === 'string') {
        run = { tool: call.name, input: call.arguments, output: `[ERROR: ${args}]` };
      } else {
        try {
          const result = await tool.run(args, input.toolContext);
          run = { tool: call.name, input: result.input, output: result.output };
          ended = result.endTurn === true;
        } catch (error) {
          input.toolContext.signal.throwIfAborted();
          run = { tool: call.name, input: call.arguments, output: `[ERROR: ${describeError(error)}]` };
        }
      }
      toolRuns.push(run);
      metrics.toolRuns.inc({ agent: input.toolContext.agent, tool: run.tool });
      input.onToolRun?.(run);
      messages.push({ role: 'tool', tool_call_id: call.id, content: run.output });
      if (ended) endTurn = true;
    }
    // An action that ends the turn (a private `chat` message): nothing more is said in the room.
    if (endTurn) return { text: '', toolRuns, roundLimitHit: false };
  }
}
