import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { FakeApp } from './types.js';

/**
 * The Socket Mode side of the fake: one or more WebSocket connections per app, `hello`
 * first, envelopes to the newest open connection (queued while an app has none, as Slack
 * retries what it could not deliver — or lost, with `loseUndelivered`, as when Slack's
 * retries ran out), acks reported back, and server pings (Bolt drops a connection that
 * hears none for 30 s).
 */
export class SocketHub {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Map<string, WebSocket[]>();
  private readonly pending = new Map<string, string[]>();
  private readonly pinger: NodeJS.Timeout;
  /** Envelopes for an app with no open connection are lost (Slack's retries ran out) instead of kept. */
  loseUndelivered = false;

  constructor(
    private readonly onAck: (app: string, envelopeId: string, payload: Record<string, unknown> | undefined) => void,
    private readonly onChange: () => void,
  ) {
    this.pinger = setInterval(() => {
      for (const list of this.sockets.values()) for (const ws of list) ws.ping();
    }, 10_000);
    this.pinger.unref();
  }

  /** How many open connections an app has. */
  count(app: string): number {
    return (this.sockets.get(app) ?? []).length;
  }

  /** Sends a serialized envelope to the app, or keeps it until the app connects. */
  send(app: string, raw: string): void {
    const open = (this.sockets.get(app) ?? []).filter((ws) => ws.readyState === WebSocket.OPEN);
    const ws = open[open.length - 1];
    if (ws) ws.send(raw);
    else if (!this.loseUndelivered) this.pending.set(app, [...(this.pending.get(app) ?? []), raw]);
  }

  /**
   * Slack ends an app's connections, as it does routinely (`disconnect`, reason `refresh_requested`), then closes
   * them; the client opens a new one.
   */
  drop(app: string): void {
    for (const ws of this.sockets.get(app) ?? []) {
      ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested', debug_info: { host: 'fake-slack' } }));
      ws.terminate();
    }
  }

  /** Accepts a WebSocket upgrade for `app` (already resolved from the URL). */
  upgrade(app: FakeApp, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const list = this.sockets.get(app.name) ?? [];
      list.push(ws);
      this.sockets.set(app.name, list);
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as { envelope_id?: string; payload?: Record<string, unknown> };
        if (message.envelope_id) this.onAck(app.name, message.envelope_id, message.payload);
      });
      ws.on('close', () => {
        this.sockets.set(
          app.name,
          (this.sockets.get(app.name) ?? []).filter((s) => s !== ws),
        );
        this.onChange();
      });
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: list.length,
          debug_info: { host: 'fake-slack', approximate_connection_time: 18060 },
          connection_info: { app_id: app.appId },
        }),
      );
      for (const raw of this.pending.get(app.name) ?? []) ws.send(raw);
      this.pending.delete(app.name);
      this.onChange();
    });
  }

  close(): void {
    clearInterval(this.pinger);
    for (const list of this.sockets.values()) for (const ws of list) ws.terminate();
    this.wss.close();
  }
}
