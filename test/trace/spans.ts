/**
 * An in-memory exporter installed as the bridge's tracer provider (through the bridge's test hook), and ways to read
 * the span tree it collected.
 */
import type { AttributeValue } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, afterEach } from 'vitest';
import { useTracerProvider } from '../../src/trace/setup.js';

export interface Recorder {
  readonly exporter: InMemorySpanExporter;
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  named(name: string | RegExp): ReadableSpan[];
  /** The spans of one trace. */
  inTrace(traceId: string): ReadableSpan[];
  /** The span whose child `span` is, if it ended. */
  parentOf(span: ReadableSpan): ReadableSpan | undefined;
  reset(): void;
  uninstall(): void;
}

export function recordSpans(options: { content?: boolean } = {}): Recorder {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const uninstall = useTracerProvider(provider, options);
  const spans = () => exporter.getFinishedSpans();
  return {
    exporter,
    spans,
    named: (name) => spans().filter((s) => (typeof name === 'string' ? s.name === name : name.test(s.name))),
    inTrace: (traceId) => spans().filter((s) => s.spanContext().traceId === traceId),
    parentOf: (span) => spans().find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId),
    reset: () => exporter.reset(),
    uninstall: () => {
      uninstall();
      void provider.shutdown();
    },
  };
}

export const attr = (span: ReadableSpan | undefined, name: string): AttributeValue | undefined =>
  span?.attributes[name];

export const traceOf = (span: ReadableSpan) => span.spanContext().traceId;

/**
 * The recorder of a test file: installed now, emptied after each test (once `close` has ended the test's bridge),
 * removed after the file.
 */
export function recordSpansInFile(close: () => Promise<void>, options: { content?: boolean } = {}): Recorder {
  const spans = recordSpans(options);
  afterEach(async () => {
    await close();
    spans.reset();
  });
  afterAll(() => spans.uninstall());
  return spans;
}
