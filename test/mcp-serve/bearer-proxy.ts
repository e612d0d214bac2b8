/**
 * An HTTP proxy on 127.0.0.1 that adds `Authorization: Bearer <token>` to every request and passes everything else
 * through unchanged — the Host and Origin headers the client sent, the body, the streamed answer. The MCP
 * conformance suite sends no headers of its own choosing; through this it reaches the endpoint as an operator's
 * client would, and what it sends to test the endpoint (another Host, for one) still arrives as it sent it.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export class BearerProxy {
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: string, token: string): Promise<BearerProxy> {
    const upstream = new URL(target);
    const server = createServer((incoming, outgoing) => {
      const forwarded = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, authorization: `Bearer ${token}` },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      incoming.on('error', () => forwarded.destroy());
      outgoing.on('close', () => forwarded.destroy());
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new BearerProxy(server, (server.address() as AddressInfo).port);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
