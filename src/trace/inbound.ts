/**
 * The root of a message's trace: a span opened when a platform's message (or an operator's command) reaches the bridge,
 * ended once the room has stored it and decided on it. The work the decision started — turns, tool runs, posts —
 * hangs below it as children that end later (a child may outlive its parent; a trace viewer shows the whole trace).
 */
import { type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ATTR_MESSAGING_MESSAGE_ID } from './attributes.js';
import { contentOf } from './content.js';
import { traceparentOf } from './context.js';
import { RT, tracer } from './names.js';
import { tracing } from './switch.js';

interface Arrival {
  readonly platform: string;
  readonly channel: string;
  readonly messageId?: string | undefined;
  readonly author: { readonly kind: string; readonly name: string };
  readonly text?: string | undefined;
  readonly trace?: string | undefined;
  /** Set for an edit of an earlier message. */
  readonly edit?: unknown;
}

/**
 * Runs `receive` for a human's message under its trace's root span (other authors' messages are not traced: an
 * agent's message belongs to the trace of the turn that wrote it), handing it the event with its trace's
 * traceparent (`trace`): the bridge carries the trace with the event, not in an asynchronous context. `from`: how it
 * came (a replica's hand-over).
 */
export function traceInbound<E extends Arrival, T>(
  event: E,
  receive: (event: E) => Promise<T>,
  from?: 'handover',
): Promise<T> {
  if (!tracing || event.author.kind !== 'human') return receive(event);
  const text = contentOf(event.text);
  return traced(
    'message',
    {
      [`${RT}.platform`]: event.platform,
      [`${RT}.room`]: `${event.platform}:${event.channel}`,
      [`${RT}.author`]: event.author.name,
      ...(event.messageId !== undefined ? { [ATTR_MESSAGING_MESSAGE_ID]: event.messageId } : {}),
      ...(from ? { [`${RT}.from`]: from } : {}),
      ...(event.edit ? { [`${RT}.edit`]: true } : {}),
      ...(text !== undefined ? { [`${RT}.text`]: text } : {}),
    },
    event,
    receive,
  );
}

/** Runs an operator command under its own trace's root span, handing it the command with its traceparent. */
export function traceCommand<
  E extends {
    readonly platform: string;
    readonly channel: string;
    readonly name: string;
    readonly user: { name: string };
    readonly trace?: string | undefined;
  },
  T,
>(event: E, run: (event: E) => Promise<T>): Promise<T> {
  if (!tracing) return run(event);
  return traced(
    `command /${event.name}`,
    {
      [`${RT}.platform`]: event.platform,
      [`${RT}.room`]: `${event.platform}:${event.channel}`,
      [`${RT}.author`]: event.user.name,
      [`${RT}.command`]: event.name,
    },
    event,
    run,
  );
}

async function traced<E extends { readonly trace?: string | undefined }, T>(
  name: string,
  attributes: Record<string, string | boolean>,
  event: E,
  run: (event: E) => Promise<T>,
): Promise<T> {
  const span = tracer().startSpan(name, { kind: SpanKind.CONSUMER, root: true, attributes });
  if (!span.isRecording()) return run(event);
  try {
    const result = await run({ ...event, trace: traceparentOf(span.spanContext()) });
    if (typeof result === 'string') span.setAttribute(`${RT}.receipt`, result);
    return result;
  } catch (error) {
    fail(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Marks a span failed with the error's message (the log has the detail). */
export function fail(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}
