/**
 * A tool call of a turn as a child span of the turn (`execute_tool <name>`): its status, exit code, output size, the
 * time its sandbox command took and the time it waited for an approval; its input and output only with
 * TRACE_CONTENT=on.
 */
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { contentOf } from './content.js';
import { GEN_AI, RT, tracer } from './names.js';
import { tracingOn } from './switch.js';

/** What a tool run returned (src/tools' ToolResult, as much of it as the span reads). */
interface ToolResult {
  readonly status: string;
  readonly output: string;
  readonly input: string;
}

/** Sandbox and approval time measured inside a tool run, by its span. */
const waits = new WeakMap<object, { sandbox: number; approval: number }>();

/** One tool call of a turn, as a child span of the turn (`execute_tool <name>`). */
export async function traceTool<R extends ToolResult>(name: string, run: () => Promise<R>): Promise<R> {
  if (!tracingOn()) return run();
  const parent = trace.getActiveSpan();
  if (!parent?.isRecording()) return run();
  const span = tracer().startSpan(`execute_tool ${name}`, {
    kind: SpanKind.INTERNAL,
    attributes: { [GEN_AI.operation]: 'execute_tool', [GEN_AI.toolName]: name },
  });
  const timing = { sandbox: 0, approval: 0 };
  waits.set(span, timing);
  try {
    const result = await context.with(trace.setSpan(context.active(), span), run);
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
    span.end();
  }
}

/** Times `work` (a sandbox command, an approval wait) into the tool run under way, when one is traced. */
export async function timeInTool<T>(kind: 'sandbox' | 'approval', work: Promise<T>): Promise<T> {
  if (!tracingOn()) return work;
  const span = trace.getActiveSpan();
  const timing = span ? waits.get(span) : undefined;
  if (!timing) return work;
  const started = performance.now();
  try {
    return await work;
  } finally {
    timing[kind] += performance.now() - started;
  }
}
