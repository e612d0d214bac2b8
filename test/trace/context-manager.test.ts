/**
 * Tracing on installs no asynchronous context manager: Node 20's AsyncLocalStorage hooks every promise of the
 * process (the platforms' clients' and the model client's too), which was most of what tracing cost a message. A
 * context set with `context.with` lasts for the synchronous call only; the bridge carries its traces explicitly.
 */
import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { startTracing, type Tracing } from '../../src/trace/setup.js';

const KEY = createContextKey('test');
let tracing: Tracing | undefined;
afterEach(async () => {
  await tracing?.shutdown();
  tracing = undefined;
});

describe('the context manager tracing installs', () => {
  it('keeps a context for the synchronous call only, not across an await', async () => {
    tracing = startTracing(
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
      { content: false, log: silentLogger() },
    );
    const marked = ROOT_CONTEXT.setValue(KEY, 'marked');
    const seen = await context.with(marked, async () => {
      const before = context.active().getValue(KEY);
      await Promise.resolve();
      return [before, context.active().getValue(KEY)];
    });
    expect(seen).toEqual(['marked', undefined]);
    expect(context.active()).toBe(ROOT_CONTEXT);
  });
});
