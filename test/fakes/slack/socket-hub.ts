import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { FakeApp } from './types.js';

/** Which of an app's open connections gets an envelope. */
export type ConnectionChoice = 'newest' | 'round-robin';

/** An envelope sent and not acknowledged yet: where it went, and when Slack gives up waiting for its ack. */
interface Unacked {
  readonly app: string;
  readonly connection: number;
  readonly timer: NodeJS.Timeout | undefined;
}

/**
 * The Socket Mode side of the fake: one or more WebSocket connections per app, `hello`
 * first, envelopes to one open connection (the newest, or each in turn as Slack spreads an
 * app's events over its connections), queued while an app has none, as Slack retries what it
 * could not deliver — or lost, with `loseUndelivered`, as when Slack's retries ran out), acks
 * reported back, envelopes not acknowledged in time (or left on a connection that closed)
 * handed back for redelivery when `redeliverAfterMs` is set, and server pings (Bolt drops a
 * connection that hears none for 30 s).
 */
export class SocketHub {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Map<string, Array<{ id: number; ws: WebSocket }>>();
  private readonly pending = new Map<string, Array<{ raw: string; envelopeId: string | undefined }>>();
  private readonly unacked = new Map<string, Unacked>();
  private readonly turns = new Map<string, number>();
  private readonly pinger: NodeJS.Timeout;
  private connections = 0;
  /** Envelopes for an app with no open connection are lost (Slack's retries ran out) instead of kept. */
  loseUndelivered = false;
  /** Which open connection of an app gets each envelope; the newest by default. */
  choice: ConnectionChoice = 'newest';
  /** Envelopes not acknowledged within this many ms are handed back (`onUnacked`); never, by default. */
  redeliverAfterMs: number | undefined;

  constructor(
    private readonly onAck: (app: string, envelopeId: string, payload: Record<string, unknown> | undefined) => void,
    private readonly onChange: () => void,
    /** An envelope Slack stopped waiting for: not acknowledged in time, or left on a connection that closed. */
    private readonly onUnacked: (
      envelopeId: string,
      reason: 'timeout' | 'connection_closed',
      connection: number,
    ) => void = () => {},
  ) {
    this.pinger = setInterval(() => {
      for (const list of this.sockets.values()) for (const { ws } of list) ws.ping();
    }, 10_000);
    this.pinger.unref();
  }

  /** How many open connections an app has. */
  count(app: string): number {
    return (this.sockets.get(app) ?? []).length;
  }

  /**
   * Sends a serialized envelope to one of the app's open connections, or keeps it until the app connects. Resolves
   * with the connection's number (1 for the first connection the hub accepted, and so on), undefined when kept or lost.
   */
  send(app: string, raw: string, envelopeId?: string, avoid?: number): number | undefined {
    const live = (this.sockets.get(app) ?? []).filter(({ ws }) => ws.readyState === WebSocket.OPEN);
    // A retry goes to another connection than the one that did not acknowledge it, when the app has one.
    const others = live.filter(({ id }) => id !== avoid);
    const open = others.length > 0 ? others : live;
    let chosen = open[open.length - 1];
    if (this.choice === 'round-robin' && open.length > 0) {
      const turn = this.turns.get(app) ?? 0;
      this.turns.set(app, turn + 1);
      chosen = open[turn % open.length];
    }
    if (chosen) {
      this.sendOn(app, chosen, raw, envelopeId);
      return chosen.id;
    }
    if (!this.loseUndelivered) this.pending.set(app, [...(this.pending.get(app) ?? []), { raw, envelopeId }]);
    return undefined;
  }

  private sendOn(app: string, to: { id: number; ws: WebSocket }, raw: string, envelopeId: string | undefined): void {
    to.ws.send(raw);
    if (envelopeId === undefined || this.redeliverAfterMs === undefined) return;
    const timer = setTimeout(() => this.giveUp(envelopeId, 'timeout'), this.redeliverAfterMs);
    timer.unref();
    this.unacked.set(envelopeId, { app, connection: to.id, timer });
  }

  private giveUp(envelopeId: string, reason: 'timeout' | 'connection_closed'): void {
    const waiting = this.unacked.get(envelopeId);
    if (!waiting) return;
    clearTimeout(waiting.timer);
    this.unacked.delete(envelopeId);
    this.onUnacked(envelopeId, reason, waiting.connection);
  }

  /**
   * Slack ends an app's connections, as it does routinely (`disconnect`, reason `refresh_requested`), then closes
   * them; the client opens a new one.
   */
  drop(app: string): void {
    for (const { ws } of this.sockets.get(app) ?? []) {
      ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested', debug_info: { host: 'fake-slack' } }));
      ws.terminate();
    }
  }

  /** Accepts a WebSocket upgrade for `app` (already resolved from the URL). */
  upgrade(app: FakeApp, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = { id: ++this.connections, ws };
      const list = this.sockets.get(app.name) ?? [];
      list.push(connection);
      this.sockets.set(app.name, list);
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as { envelope_id?: string; payload?: Record<string, unknown> };
        if (!message.envelope_id) return;
        const waiting = this.unacked.get(message.envelope_id);
        if (waiting) clearTimeout(waiting.timer);
        this.unacked.delete(message.envelope_id);
        this.onAck(app.name, message.envelope_id, message.payload);
      });
      ws.on('close', () => {
        this.sockets.set(
          app.name,
          (this.sockets.get(app.name) ?? []).filter((s) => s !== connection),
        );
        // What it was given and did not acknowledge goes to another connection (Slack sees the connection gone).
        for (const [envelopeId, waiting] of [...this.unacked])
          if (waiting.connection === connection.id) this.giveUp(envelopeId, 'connection_closed');
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
      for (const { raw, envelopeId } of this.pending.get(app.name) ?? [])
        this.sendOn(app.name, connection, raw, envelopeId);
      this.pending.delete(app.name);
      this.onChange();
    });
  }

  close(): void {
    clearInterval(this.pinger);
    for (const { timer } of this.unacked.values()) clearTimeout(timer);
    this.unacked.clear();
    for (const list of this.sockets.values()) for (const { ws } of list) ws.terminate();
    this.wss.close();
  }
}
