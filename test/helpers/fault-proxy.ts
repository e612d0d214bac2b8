/**
 * A TCP proxy on 127.0.0.1 between a bridge and its database, that a test can break the way a network partition
 * does: `cut()` destroys every connection mid-stream (a reset, no goodbye), then refuses new ones (reset at once)
 * until `accept()`. `cutAfter(bytes)` cuts the moment the client sends those bytes (a `BEGIN`: a connection is then
 * held in a transaction), so the cut lands mid-transaction rather than between statements. `stall()` keeps every
 * connection open and lets nothing through either way, as a partition that drops packets does, until `flow()`.
 */

import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';

export interface FaultProxy {
  readonly port: number;
  /** Connections made through the proxy so far. */
  connections(): number;
  /** Destroys every open connection and refuses new ones until `accept()`; resolves with how many were cut. */
  cut(): number;
  /** Cuts (as `cut()`) as soon as a client sends `bytes`; resolves with how many were cut then. */
  cutAfter(bytes: string): Promise<number>;
  /** Accepts connections again. */
  accept(): void;
  /** Lets no byte through, either way, on any connection (open or new) until `flow()`: what is sent is dropped. */
  stall(): void;
  flow(): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<Socket>();
  const clients = new Set<Socket>();
  let refusing = false;
  let stalled = false;
  let made = 0;
  let armed: { bytes: Buffer; cut: (count: number) => void } | undefined;
  const cut = () => {
    refusing = true;
    const count = clients.size;
    for (const socket of open) socket.resetAndDestroy();
    open.clear();
    clients.clear();
    return count;
  };
  const server = createServer((client) => {
    if (refusing) return void client.resetAndDestroy();
    made += 1;
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    clients.add(client);
    const drop = () => {
      clients.delete(client);
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.on('data', (chunk: Buffer) => {
      if (!stalled) client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => {
      if (stalled) return;
      upstream.write(chunk);
      if (armed && chunk.includes(armed.bytes)) {
        const { cut: done } = armed;
        armed = undefined;
        // After the bytes are on their way: the server has the statement, the client waits for its answer.
        setImmediate(() => done(cut()));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => made,
    cut,
    cutAfter: (bytes) =>
      new Promise<number>((resolve) => {
        armed = { bytes: Buffer.from(bytes), cut: resolve };
      }),
    accept: () => {
      refusing = false;
    },
    stall: () => {
      stalled = true;
    },
    flow: () => {
      stalled = false;
    },
    close: async () => {
      armed = undefined;
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
