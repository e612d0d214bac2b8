/**
 * The wire format, against a real OTLP/HTTP receiver: a small HTTP server in the test takes what the bridge's
 * exporter sends (OTLP/HTTP, JSON encoding: the 0.2xx exporter's default) when OTEL_EXPORTER_OTLP_ENDPOINT points at
 * it, and the test decodes the spans — names, parent ids, resource and attributes. `--check` reads the same endpoint;
 * a shutdown flushes within its bound even when the receiver never answers.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { checkTraces } from '../../src/trace/check.js';
import { SHUTDOWN_BOUND_MS, startTracing, type Tracing } from '../../src/trace/setup.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: Array<{ key: string; value: OtlpValue }>;
  links?: Array<{ traceId: string; spanId: string }>;
}
interface OtlpExport {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: OtlpValue }> };
    scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }>;
  }>;
}

const read = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    request.on('end', () => resolve(body));
  });

/** A receiver of OTLP/HTTP exports: each body decoded, with the request's path and content type. */
async function receiver(answer = true): Promise<{
  server: Server;
  url: string;
  exports: Array<{ path: string; type: string; body: OtlpExport }>;
}> {
  const exports: Array<{ path: string; type: string; body: OtlpExport }> = [];
  const server = createServer((request, response) => {
    void read(request).then((body) => {
      exports.push({
        path: request.url ?? '',
        type: request.headers['content-type'] ?? '',
        body: JSON.parse(body || '{}') as OtlpExport,
      });
      if (!answer) return; // a receiver that takes the export and never answers
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports };
}

const value = (v: OtlpValue | undefined): unknown =>
  v?.stringValue ??
  (v?.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v?.boolValue ??
  v?.arrayValue?.values?.map(value);
const attrOf = (span: OtlpSpan | undefined, key: string) => value(span?.attributes?.find((a) => a.key === key)?.value);

let h: DiscordHarness | undefined;
let tracing: Tracing | undefined;
let servers: Server[] = [];
const OTEL_VARS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME', 'OTEL_BSP_SCHEDULE_DELAY'];
afterEach(async () => {
  await h?.close();
  h = undefined;
  await tracing?.shutdown();
  tracing = undefined;
  trace.disable();
  for (const name of OTEL_VARS) delete process.env[name];
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
});

describe('traces over OTLP/HTTP', () => {
  it('sends one message trace a collector can read: JSON spans with their parents, resource and attributes', async () => {
    const collector = await receiver();
    servers.push(collector.server);
    tracing = startTracing(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: 'roundtable-test',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
      { content: false, log: silentLogger() },
    );
    expect(tracing.target).toBe(`${collector.url}/v1/traces`);
    h = await startDiscordHarness({ agents: [{ name: 'pm', activation: 'mention' }] });
    h.llm.respond(() => ({ content: 'Exported.' }));
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('pm-bot').id}> export this`);
    await h.discord.until(() => (h?.discord.botMessages('general').length ?? 0) === 1);
    await h.settle(asked.id);
    await h.close();
    h = undefined;
    // The shutdown sends what is still queued.
    await tracing.shutdown();

    expect(collector.exports.length).toBeGreaterThan(0);
    for (const sent of collector.exports) {
      expect(sent.path).toBe('/v1/traces');
      expect(sent.type).toMatch(/^application\/json/);
    }
    const resources = collector.exports.flatMap((e) => e.body.resourceSpans);
    expect(value(resources[0]?.resource.attributes.find((a) => a.key === 'service.name')?.value)).toBe(
      'roundtable-test',
    );
    const sent = resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const named = (name: string) => sent.filter((s) => s.name === name);
    const [root] = named('message');
    expect(root?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root?.parentSpanId ?? '').toBe('');
    expect(attrOf(root, 'messaging.message.id')).toBe(asked.id);
    const decision = named('decide').find((s) => s.parentSpanId === root?.spanId);
    expect(attrOf(decision, 'roundtable.asked')).toEqual(['pm:addressed']);
    expect(named('store commit').some((s) => s.parentSpanId === decision?.spanId)).toBe(true);
    const [turn] = named('chat pm');
    expect(turn?.traceId).toBe(root?.traceId);
    expect(turn?.parentSpanId).toBe(root?.spanId);
    expect(attrOf(turn, 'gen_ai.request.model')).toBe('pm');
    expect(attrOf(turn, 'gen_ai.operation.name')).toBe('chat');
    expect(Number(attrOf(turn, 'gen_ai.usage.input_tokens'))).toBeGreaterThan(0);
    expect(attrOf(turn, 'roundtable.outcome')).toBe('reply');
    const [post] = named('post');
    expect(post?.parentSpanId).toBe(turn?.spanId);
    expect(attrOf(post, 'roundtable.platform')).toBe('discord');
  }, 60_000);

  it('says in --check where traces go and whether the endpoint answers', async () => {
    const collector = await receiver();
    servers.push(collector.server);
    expect(await checkTraces({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url })).toEqual([
      { ok: true, item: 'traces', detail: `to ${collector.url}/v1/traces: the endpoint answers (HTTP 200)` },
    ]);
    expect(await checkTraces({})).toEqual([
      { ok: true, item: 'traces', detail: 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them)' },
    ]);
    const closed = collector.url.replace(/:\d+$/, ':1');
    const [line] = await checkTraces({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${closed}/v1/traces` });
    expect(line?.ok).toBe(false);
    expect(line?.detail).toMatch(/^to http:\/\/127\.0\.0\.1:1\/v1\/traces: the endpoint does not answer \(.+\)$/);
    // A receiver that never answers: the check ends within its bound.
    const silent = await receiver(false);
    servers.push(silent.server);
    const started = Date.now();
    const [late] = await checkTraces({ OTEL_EXPORTER_OTLP_ENDPOINT: silent.url });
    expect(late?.detail).toContain('no answer within 3 s');
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it('ends a shutdown within its bound when the collector never answers', async () => {
    const silent = await receiver(false);
    servers.push(silent.server);
    tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: silent.url }, { content: false, log: silentLogger() });
    trace.getTracer('test').startSpan('lost').end();
    const started = Date.now();
    await tracing.shutdown();
    expect(Date.now() - started).toBeLessThan(SHUTDOWN_BOUND_MS + 2000);
    tracing = undefined;
  }, 30_000);
});
