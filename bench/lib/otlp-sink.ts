/**
 * A local OTLP/HTTP receiver for benchmarks: it takes each export, reads it whole and answers 200, as a collector on
 * the same machine would (it decodes nothing: the figure is the bridge's cost of tracing, not a collector's).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startOtlpSink(): Promise<{ url: string; exports(): number; close(): Promise<void> }> {
  let exports = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      exports += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
