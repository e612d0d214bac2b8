/**
 * A person at the web room, as the room's page behaves: their socket opened with their session cookie, posts kept
 * until the bridge acknowledges them and sent again (same id) after a reconnect or a refusal that passes, and the
 * socket opened again whenever it closes (a bridge restarted on another port: `base()` says where it is now).
 */
import WebSocket from 'ws';
import type { ServerFrame } from '../../adapters/web/protocol.js';

export class WebPerson {
  /** Posts not acknowledged yet: id → text. */
  readonly pending = new Map<string, string>();
  /** Close codes seen (1009: a frame over the server's limit). */
  readonly closes: number[] = [];
  refusals = 0;
  /** The types of the last frames received (for a failure's message). */
  readonly seen: string[] = [];
  /** The last reason the socket could not open or closed with an error (for a failure's message). */
  lastError = '';
  private ws: WebSocket | undefined;
  private open = false;
  private ended = false;

  constructor(
    readonly name: string,
    private readonly cookie: string,
    private readonly base: () => string | undefined,
  ) {}

  connect(): void {
    if (this.ended) return;
    const base = this.base();
    if (!base) return void setTimeout(() => this.connect(), 500);
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws?room=general`, {
      headers: { cookie: this.cookie, origin: base },
    });
    this.ws = ws;
    ws.on('open', () => {
      this.open = true;
      for (const [id, text] of this.pending) this.send(id, text);
    });
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as ServerFrame;
      this.seen.push(frame.type);
      if (this.seen.length > 5) this.seen.shift();
      if (frame.type === 'ack') this.pending.delete(frame.id);
      else if (frame.type === 'refused') {
        this.refusals += 1;
        const text = this.pending.get(frame.id);
        if (text !== undefined) setTimeout(() => this.send(frame.id, text), 2_000);
      }
    });
    ws.on('error', (error) => {
      this.lastError = error.message;
    });
    ws.on('close', (code) => {
      this.closes.push(code);
      this.open = false;
      if (this.ws === ws) setTimeout(() => this.connect(), 500);
    });
  }

  say(id: string, text: string): void {
    this.pending.set(id, text);
    this.send(id, text);
  }

  /** One frame over the server's 256 KB limit, as a page pasting a long log without its own check would send. */
  oversized(): boolean {
    if (!this.open || !this.ws) return false;
    this.ws.send(JSON.stringify({ type: 'post', id: `big-${Date.now()}`, text: 'x'.repeat(300_000) }));
    return true;
  }

  close(): void {
    this.ended = true;
    this.ws?.terminate();
  }

  private send(id: string, text: string): void {
    if (this.open && this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'post', id, text }));
  }
}
