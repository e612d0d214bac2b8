/**
 * A post as a span: below its turn's span (a reply) or the decision that sent it (the bridge's lines), with the
 * platform, each failed try and the wait before the next one (a platform's Retry-After included), and how it ended.
 */
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { PendingPost } from '../room/state.js';
import { turnContext } from './book.js';
import { contentOf } from './content.js';
import { contextOf, logFieldsOf } from './context.js';
import { RT, tracer } from './names.js';
import { tracing } from './switch.js';

/** What the poster tells the span (nothing, cheaply, when there is none). */
export interface PostTrace {
  /** The ids the post's log lines carry (bound to a logger). */
  readonly logFields: Record<string, string>;
  /** A try failed: how many so far, the wait before the next one, and the platform's Retry-After (ms) if it gave one. */
  retry(tries: number, waitMs: number, retryAfterMs: number | undefined, reason: string): void;
  /** How it ended: posted, refused (for good), dropped by an operator, left to another bridge, or stopped. */
  end(outcome: string): void;
}

/**
 * The post's span. `resend`: sent again from the outbox after a restart (the turn's span is gone with the process:
 * it joins its message's trace through the trace the post was written with).
 */
export function tracePost(
  room: { key: string; platform: string },
  post: PendingPost,
  resend = false,
): PostTrace | undefined {
  if (!tracing) return undefined;
  // The turn's span has ended by now (a child may outlive its parent); without one, the decision that sent it, or
  // the message's trace as the post keeps it.
  const active = context.active();
  const parent = turnContext(room.key, post.ask) ?? (trace.getSpanContext(active) ? active : contextOf(post.trace));
  if (!trace.getSpanContext(parent)) return undefined;
  const text = contentOf(post.text);
  const span: Span = tracer().startSpan(
    'post',
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        [`${RT}.platform`]: room.platform,
        [`${RT}.room`]: room.key,
        [`${RT}.post`]: post.id,
        [`${RT}.purpose`]: post.purpose,
        [`${RT}.agent`]: post.agent ?? 'bridge',
        ...(text !== undefined ? { [`${RT}.text`]: text } : {}),
        ...(resend ? { [`${RT}.resent`]: true } : {}),
      },
    },
    parent,
  );
  if (!span.isRecording()) return undefined;
  if (resend) span.addEvent(`${RT}.resent`, { [`${RT}.note`]: 'sent again from the outbox after a restart' });
  let retries = 0;
  let waited = 0;
  let retryAfter = 0;
  return {
    logFields: logFieldsOf(span.spanContext()),
    retry: (tries, waitMs, retryAfterMs, reason) => {
      retries = tries;
      waited += waitMs;
      retryAfter += retryAfterMs ?? 0;
      span.addEvent(`${RT}.retry`, {
        [`${RT}.tries`]: tries,
        [`${RT}.wait_ms`]: waitMs,
        ...(retryAfterMs !== undefined ? { [`${RT}.retry_after_ms`]: retryAfterMs } : {}),
        [`${RT}.reason`]: reason,
      });
    },
    end: (outcome) => {
      span.setAttributes({
        [`${RT}.retries`]: retries,
        [`${RT}.retry_wait_ms`]: waited,
        [`${RT}.retry_after_wait_ms`]: retryAfter,
        [`${RT}.outcome`]: outcome,
      });
      if (outcome === 'refused')
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the platform refused the post' });
      span.end();
    },
  };
}
