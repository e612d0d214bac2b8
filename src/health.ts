/**
 * HEALTH_PORT: `/healthz` (each adapter connected, the store writable: 200 or 503 with a small JSON
 * body) and `/metrics` (Prometheus text format). Off unless HEALTH_PORT is set.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from './errors.js';
import type { Logger } from './log.js';
import { collectProcessMetrics, registry } from './metrics.js';
import type { ChatAdapter } from './ports.js';
import type { StorePort } from './store/port.js';

export interface Health {
  readonly ok: boolean;
  readonly adapters: Record<string, boolean>;
  readonly store: boolean;
}

/** A real write to the store (`ping`): a full disk or a read-only mount shows. */
export async function storeWritable(store: Pick<StorePort, 'ping'>): Promise<boolean> {
  try {
    await store.ping();
    return true;
  } catch {
    return false;
  }
}

export async function health(adapters: readonly ChatAdapter[], store: Pick<StorePort, 'ping'>): Promise<Health> {
  const states: Record<string, boolean> = {};
  // An adapter that cannot tell (the terminal room) is up while the bridge runs.
  for (const adapter of adapters) states[adapter.platform] = adapter.connected?.() ?? true;
  const writable = await storeWritable(store);
  return { ok: writable && Object.values(states).every(Boolean), adapters: states, store: writable };
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: {
  port: number;
  host: string;
  adapters: readonly ChatAdapter[];
  store: Pick<StorePort, 'ping'>;
  /** With bridges sharing the store: this one's REPLICA_ID and the rooms it holds. */
  leases?: () => { readonly replica: string; readonly held: number } | undefined;
  logger: Logger;
}): Promise<HealthServer> {
  collectProcessMetrics();
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      const leases = options.leases?.();
      void health(options.adapters, options.store).then((state) => {
        const body = JSON.stringify({
          status: state.ok ? 'ok' : 'unavailable',
          adapters: state.adapters,
          store: state.store,
          ...(leases ? { replica: leases.replica, leases: leases.held } : {}),
        });
        response.writeHead(state.ok ? 200 : 503, { 'content-type': 'application/json' }).end(body);
      });
      return;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (error: unknown) => {
          options.logger.error({ err: error }, 'metrics could not be collected');
          response.writeHead(500).end();
        },
      );
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz or /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(
        new ConfigError(
          'environment',
          'HEALTH_PORT',
          `cannot listen on ${options.host}:${options.port} (${error.code})`,
        ),
      );
    server.once('error', failed);
    server.listen(options.port, options.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port, host: options.host }, 'health and metrics server listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
