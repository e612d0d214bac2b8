/**
 * A TCP proxy in front of the web room, so a test can drop a page's connection the way a network does: `cut()`
 * ends every connection through it and refuses new ones until `restore()`; `stall()` lets the connections go
 * quiet without ending them.
 */

import type { AddressInfo } from 'node:net';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<[Socket, Socket]>();
  private down = false;

  private constructor(targetPort: number) {
    this.server = createServer((client) => {
      if (this.down) {
        client.destroy();
        return;
      }
      const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      client.on('close', () => {
        this.pairs.delete(pair);
        upstream.destroy();
      });
      upstream.on('close', () => client.destroy());
    });
  }

  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `http://127.0.0.1:<port>`: the address pages use. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The network goes: every connection ends, new ones are refused. */
  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  /** The network goes quiet: the connections through it stay open, but nothing passes any more (new ones work). */
  stall(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
    this.pairs.clear();
  }

  restore(): void {
    this.down = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
