/**
 * Tracing's set-up: OpenTelemetry's Node SDK exporting over OTLP/HTTP in batches, switched on by the standard OTEL_*
 * variables (read by the SDK itself: endpoint, headers, service name, sampler, batch sizes). With no endpoint set,
 * nothing is installed: the API's no-op tracer makes every span a non-recording one, and the bridge skips whatever it
 * would only compute for a recording span.
 */
import { context, DiagLogLevel, diag, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { setTraceContent } from './content.js';
import { setTracing } from './switch.js';
import { SyncContextManager } from './sync-context.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The longest a shutdown waits for the spans still queued to be sent (a collector that is down must not hold it). */
export const SHUTDOWN_BOUND_MS = 3000;

/** What was installed: where spans go (none: off), and how to flush them at shutdown. */
export interface Tracing {
  readonly target: string | undefined;
  shutdown(): Promise<void>;
}

/**
 * Where the SDK sends spans, by its own rules: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else
 * OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces`; none when neither is set, OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none.
 */
export function traceTarget(env: Env): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/**
 * Starts tracing when the environment asks for it. `env` is the process's environment with `.env` under it: the
 * OTEL_* variables only `.env` sets are handed to the SDK through `process.env` (it reads nowhere else).
 */
export function startTracing(env: Env, options: { content: boolean; log: Logger }): Tracing {
  setTraceContent(options.content);
  const target = traceTarget(env);
  if (target === undefined) return { target, shutdown: async () => {} };
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('OTEL_') && value !== undefined && process.env[name] === undefined) process.env[name] = value;
  }
  const { log } = options;
  // The SDK's own troubles (an export refused, a collector away) reach the log once each, at warn.
  diag.setLogger(
    {
      error: (message, ...args) => log.warn({ otel: args }, `traces: ${message}`),
      warn: (message, ...args) => log.warn({ otel: args }, `traces: ${message}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const provider = new NodeTracerProvider({
    // The SDK's own attributes, then the bridge's name, then OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
    resource: defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'roundtable' }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // Not the SDK's AsyncLocalStorage context manager: the bridge carries its traces explicitly (see sync-context.ts).
  provider.register({ contextManager: new SyncContextManager() });
  setTracing(true);
  log.info({ target }, 'traces are exported');
  return { target, shutdown: () => flushWithin(provider, SHUTDOWN_BOUND_MS, log) };
}

/** Sends what is queued and stops, within `bound` ms. */
async function flushWithin(provider: NodeTracerProvider, bound: number, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), bound);
  });
  setTracing(false);
  context.disable();
  try {
    const ended = await Promise.race([provider.shutdown().then(() => 'sent' as const), late]);
    if (ended === 'late') log.warn({ boundMs: bound }, 'traces: the last spans were not all sent in time');
  } catch (error) {
    log.warn({ err: error }, 'traces: the last spans could not be sent');
  } finally {
    clearTimeout(timer);
  }
}

/**
 * For tests: installs `provider` (an in-memory exporter's) as the one tracing goes to, with or without content.
 * Returns a function that removes it again.
 */
export function useTracerProvider(provider: NodeTracerProvider, options: { content?: boolean } = {}): () => void {
  setTraceContent(options.content === true);
  provider.register({ contextManager: new SyncContextManager() });
  setTracing(true);
  return () => {
    setTraceContent(false);
    setTracing(false);
    trace.disable();
    context.disable();
  };
}
