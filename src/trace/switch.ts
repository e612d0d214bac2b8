/**
 * Whether a tracer provider is installed (an OTLP endpoint set, or a test's exporter). Every tracing call checks it
 * first: with tracing off the bridge's cost is this one check, not a no-op span's allocations.
 */
export let tracing = false;

export function setTracing(value: boolean): void {
  tracing = value;
}
