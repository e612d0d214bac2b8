/**
 * An HTTP proxy on 127.0.0.1 that records each request (method, path, body, when) and forwards it: give one bridge
 * process its own proxy in front of the platforms' fakes, and the records tell what that process sent, where
 * several processes share one bot token. `routes` maps a path prefix to the origin it is forwarded to (the prefix
 * is taken off).
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  readonly method: string;
  /** The path forwarded (without the route's prefix). */
  readonly path: string;
  readonly route: string;
  readonly body: string;
  readonly at: number;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly requests: ProxiedRequest[];
  close(): Promise<void>;
}

export async function startRecordingProxy(routes: Readonly<Record<string, string>>): Promise<RecordingProxy> {
  const requests: ProxiedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = req.url ?? '/';
      const route = Object.keys(routes).find((prefix) => url.startsWith(`${prefix}/`));
      if (route === undefined) return void res.writeHead(404).end();
      const target = new URL(routes[route] ?? '');
      const path = url.slice(route.length);
      requests.push({ method: req.method ?? 'GET', path, route, body: body.toString('utf8'), at: Date.now() });
      const forwarded = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => res.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
