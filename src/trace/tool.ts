/**
 * A tool call of a turn as a child span of the turn (`execute_tool <name>`): its status, exit code, output size, the
 * time its sandbox command took and the time it waited for an approval; its input and output only with
 * TRACE_CONTENT=on.
 */
import { type Context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { contentOf } from './content.js';
import { GEN_AI, RT, tracer } from './names.js';
import { tracing } from './switch.js';

/** What a tool run returned (src/tools' ToolResult, as much of it as the span reads). */
interface ToolResult {
  readonly status: string;
  readonly output: string;
  readonly input: string;
}

/** Whose tool run it is: a turn runs its tool calls one after another, and one turn per agent runs in a room. */
interface Runner {
  readonly room: string;
  readonly agent: string;
}

/** Sandbox and approval time measured inside the tool run under way, by its runner. */
const waits = new Map<string, { sandbox: number; approval: number }>();
const keyOf = (runner: Runner) => `${runner.room}\n${runner.agent}`;

/**
 * One tool call of a turn, as a child span of the turn (`execute_tool <name>`). `turn`: the turn's span as a parent
 * (none: the turn is not traced).
 */
export async function traceTool<R extends ToolResult>(
  name: string,
  run: () => Promise<R>,
  turn: Context | undefined,
  runner: Runner,
): Promise<R> {
  if (!tracing || turn === undefined) return run();
  if (!trace.getSpan(turn)?.isRecording()) return run();
  const span = tracer().startSpan(
    `execute_tool ${name}`,
    { kind: SpanKind.INTERNAL, attributes: { [GEN_AI.operation]: 'execute_tool', [GEN_AI.toolName]: name } },
    turn,
  );
  const timing = { sandbox: 0, approval: 0 };
  const key = keyOf(runner);
  waits.set(key, timing);
  try {
    const result = await run();
    const exit = /\[exit code: (\d+)\]$/.exec(result.output)?.[1];
    const input = contentOf(result.input);
    const output = contentOf(result.output);
    span.setAttributes({
      [`${RT}.tool.status`]: result.status,
      [`${RT}.tool.bytes`]: Buffer.byteLength(result.output),
      ...(name === 'bash' && result.status === 'ok'
        ? { [`${RT}.tool.exit`]: exit === undefined ? 0 : Number(exit) }
        : {}),
      ...(timing.sandbox > 0 ? { [`${RT}.sandbox_ms`]: Math.round(timing.sandbox) } : {}),
      ...(timing.approval > 0 ? { [`${RT}.approval_wait_ms`]: Math.round(timing.approval) } : {}),
      ...(input !== undefined ? { [`${RT}.tool.input`]: input } : {}),
      ...(output !== undefined ? { [`${RT}.tool.output`]: output } : {}),
    });
    if (result.status !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: result.status });
    return result;
  } finally {
    if (waits.get(key) === timing) waits.delete(key);
    span.end();
  }
}

/** Times `work` (a sandbox command, an approval wait) into the runner's tool run under way, when one is traced. */
export async function timeInTool<T>(kind: 'sandbox' | 'approval', work: Promise<T>, runner: Runner): Promise<T> {
  if (!tracing) return work;
  const timing = waits.get(keyOf(runner));
  if (!timing) return work;
  const started = performance.now();
  try {
    return await work;
  } finally {
    timing[kind] += performance.now() - started;
  }
}
