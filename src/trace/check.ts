/** `--check`'s line about traces: where they go, and whether the endpoint answers (within a bound). */
import { traceTarget } from './setup.js';

type Env = Readonly<Record<string, string | undefined>>;

/** How long `--check` waits for the trace endpoint. */
const ANSWER_WITHIN_MS = 3000;

export async function checkTraces(
  env: Env,
  fetcher: typeof fetch = fetch,
): Promise<ReadonlyArray<{ ok: boolean; item: string; detail: string }>> {
  const target = traceTarget(env);
  if (target === undefined) {
    return [{ ok: true, item: 'traces', detail: 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them)' }];
  }
  try {
    // An empty export: a collector answers it (200) without storing anything.
    const response = await fetcher(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resourceSpans: [] }),
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
    await response.body?.cancel();
    // A 4xx is an answer too (a collector wanting the OTEL_EXPORTER_OTLP_HEADERS the SDK sends); a 5xx is not.
    const ok = response.status < 500;
    const detail = `to ${target}: ${ok ? 'the endpoint answers' : 'the endpoint fails'} (HTTP ${response.status})`;
    return [{ ok, item: 'traces', detail }];
  } catch (error) {
    const why =
      error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')
        ? `no answer within ${ANSWER_WITHIN_MS / 1000} s`
        : error instanceof Error
          ? ((error.cause as Error | undefined)?.message ?? error.message)
          : String(error);
    return [{ ok: false, item: 'traces', detail: `to ${target}: the endpoint does not answer (${why})` }];
  }
}
