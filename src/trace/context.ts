/**
 * A trace's context as the room keeps it: a W3C `traceparent` string, stored with the message's asks and requests
 * (room state, so it survives a restart and a move to another replica). The room reads nothing in it.
 */
import { type Context, ROOT_CONTEXT, type SpanContext, trace } from '@opentelemetry/api';
import { tracing } from './switch.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The traceparent of a span context; none for an invalid one (no provider: the no-op tracer's spans). */
export function traceparentOf(span: SpanContext): string | undefined {
  if (!trace.isSpanContextValid(span)) return undefined;
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The span context a traceparent names (remote: it may have been made by another process or replica). */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!match) return undefined;
  const [, traceId = '', spanId = '', flags = '00'] = match;
  const span = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
  return trace.isSpanContextValid(span) ? span : undefined;
}

/** A context whose parent is the span a traceparent names; the root context when none. */
export function contextOf(traceparent: string | undefined): Context {
  const span = spanContextOf(traceparent);
  return span ? trace.setSpanContext(ROOT_CONTEXT, span) : ROOT_CONTEXT;
}

/**
 * The ids a log line carries, so that it leads to its trace (pino's `mixin`): those of the span active now, which is
 * one only in a traced step's synchronous part (the turn's lines get theirs from the turn's logger, `logFieldsOf`).
 */
export function logTraceFields(): Record<string, string> {
  // A fresh object each time: pino merges the line's own fields into what the mixin returns.
  if (!tracing) return {};
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? { trace_id: traceId, span_id: spanId } : {};
}

/** The ids a span's log lines carry, bound to a logger (`log.child`) that goes with the span's work. */
export function logFieldsOf(span: SpanContext): Record<string, string> {
  return { trace_id: span.traceId, span_id: span.spanId };
}
