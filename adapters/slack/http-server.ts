import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventsPath, type SlackIdentity } from './identity.js';

/**
 * One HTTP server for every HTTP-mode app: Slack calls `/slack/events/<agent>` (or
 * `/slack/events` when only one app uses HTTP); each path goes to that app's Bolt
 * receiver, which checks the signature (401 when bad or stale) before anything runs.
 */
export class SlackHttpServer {
  private readonly server: Server;
  private readonly routes = new Map<string, SlackIdentity>();

  constructor(identities: readonly SlackIdentity[]) {
    for (const identity of identities) this.routes.set(eventsPath(identity.agent), identity);
    const only = identities.length === 1 ? identities[0] : undefined;
    if (only) this.routes.set('/slack/events', only);
    this.server = createServer((req, res) => this.route(req, res));
  }

  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  get listening(): boolean {
    return this.server.listening;
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const identity = this.routes.get(path);
    try {
      if (!identity || req.method !== 'POST') throw new Error('no route');
      // Bolt's receiver expects the path it was configured with.
      req.url = eventsPath(identity.agent);
      identity.handleHttp(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(404).end();
    }
  }
}
