/**
 * The root of a message's trace: a span opened when a platform's message (or an operator's command) reaches the bridge,
 * ended once the room has stored it and decided on it. The work the decision started — turns, tool runs, posts —
 * hangs below it as children that end later (a child may outlive its parent; a trace viewer shows the whole trace).
 */
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_MESSAGING_MESSAGE_ID } from './attributes.js';
import { contentOf } from './content.js';
import { RT, tracer } from './names.js';
import { tracingOn } from './switch.js';

interface Arrival {
  readonly platform: string;
  readonly channel: string;
  readonly messageId?: string | undefined;
  readonly author: { readonly kind: string; readonly name: string };
  readonly text?: string | undefined;
}

/**
 * Runs `receive` for a human's message under its trace's root span (other authors' messages are not traced: an
 * agent's message belongs to the trace of the turn that wrote it). `from`: how it came (a replica's hand-over).
 */
export function traceInbound<T>(event: Arrival, receive: () => Promise<T>, from?: 'handover'): Promise<T> {
  if (!tracingOn() || event.author.kind !== 'human') return receive();
  const text = contentOf(event.text);
  return traced(
    'message',
    {
      [`${RT}.platform`]: event.platform,
      [`${RT}.room`]: `${event.platform}:${event.channel}`,
      [`${RT}.author`]: event.author.name,
      ...(event.messageId !== undefined ? { [ATTR_MESSAGING_MESSAGE_ID]: event.messageId } : {}),
      ...(from ? { [`${RT}.from`]: from } : {}),
      ...(text !== undefined ? { [`${RT}.text`]: text } : {}),
    },
    receive,
  );
}

/** Runs an operator command under its own trace's root span. */
export function traceCommand<T>(
  event: {
    readonly platform: string;
    readonly channel: string;
    readonly name: string;
    readonly user: { name: string };
  },
  run: () => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return run();
  return traced(
    `command /${event.name}`,
    {
      [`${RT}.platform`]: event.platform,
      [`${RT}.room`]: `${event.platform}:${event.channel}`,
      [`${RT}.author`]: event.user.name,
      [`${RT}.command`]: event.name,
    },
    run,
  );
}

async function traced<T>(name: string, attributes: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const span = tracer().startSpan(name, { kind: SpanKind.CONSUMER, root: true, attributes });
  if (!span.isRecording()) return run();
  try {
    const result = await context.with(trace.setSpan(context.active(), span), run);
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
