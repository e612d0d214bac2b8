/**
 * A page's WebSocket to the web room, driven from a test (the `ws` client, with the page's cookie and origin): the
 * frames it received, what it sends, and the close it saw.
 */
import WebSocket from 'ws';
import type { PostFrame, ServerFrame } from '../../adapters/web/protocol.js';
import { until } from '../helpers/until.js';

export class SocketPage {
  readonly frames: ServerFrame[] = [];
  closed: { code: number; reason: string } | undefined;
  /** `ws`: the socket itself, for tests that send what no page would. */
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.frames.push(JSON.parse(String(data)) as ServerFrame));
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
    });
  }

  /** Opens a page's socket and waits for its first frame (welcome or resume). */
  static async open(
    base: string,
    cookie: string,
    options: { room?: string; query?: string; origin?: string; autoPong?: boolean } = {},
  ): Promise<SocketPage> {
    const url = `${base.replace(/^http/, 'ws')}/ws?room=${options.room ?? 'general'}${options.query ?? ''}`;
    const ws = new WebSocket(url, {
      headers: { cookie, origin: options.origin ?? base },
      autoPong: options.autoPong ?? true,
    });
    const page = new SocketPage(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_request, response) => reject(new Error(`refused: ${response.statusCode}`)));
      ws.once('error', reject);
    });
    await until(() => page.frames.length > 0);
    return page;
  }

  post(frame: Omit<PostFrame, 'type'>): void {
    this.ws.send(JSON.stringify({ type: 'post', ...frame }));
  }

  /** The first frame that matches, once it came. */
  async next<T extends ServerFrame['type']>(
    type: T,
    matches: (frame: Extract<ServerFrame, { type: T }>) => boolean = () => true,
  ): Promise<Extract<ServerFrame, { type: T }>> {
    let found: Extract<ServerFrame, { type: T }> | undefined;
    await until(() => {
      found = this.frames.find((f): f is Extract<ServerFrame, { type: T }> => f.type === type && matches(f as never));
      return found !== undefined;
    });
    return found as Extract<ServerFrame, { type: T }>;
  }

  /** The events received, in order. */
  events(): Array<Extract<ServerFrame, { type: 'event' }>> {
    return this.frames.filter((f): f is Extract<ServerFrame, { type: 'event' }> => f.type === 'event');
  }

  /** The messages shown by events (ids in order). */
  messageIds(): string[] {
    return this.events().flatMap((f) => (f.event.kind === 'message' ? [f.event.message.id] : []));
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

/** Whether a socket with these headers is refused, and with which status. */
export function refusedStatus(base: string, headers: Record<string, string>, room = 'general'): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws?room=${room}`, { headers });
    ws.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the socket was accepted'));
    });
    ws.once('error', () => {});
  });
}
