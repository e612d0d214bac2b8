/**
 * The web room's HTTP server: its pages (sign-in, the room, the operator console), the page's modules and style
 * sheet, its small API and the WebSocket each open page holds. Every page, API call and socket needs a session
 * (the console an operator's); anything that changes something must come from the room's own origin; sign-in and
 * uploads are rate-limited.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { AdapterSink } from '../../src/ports.js';
import { type Access, noSuchRoomPage, notOperatorPage, signedOutPage, type Viewer, wrongHostPage } from './access.js';
import { type Connections, MAX_FILES, MAX_TEXT, PAGE_SIZE, roomKey, wireMessage } from './connections.js';
import type { HeldFiles } from './held-files.js';
import { clientAddress, ownHost, readBody, refuse, sameOrigin, send, sendJson, TooLarge } from './http.js';
import type { McpEndpoint } from './mcp-endpoint.js';
import type { OpsApi } from './ops-api.js';
import type { RateLimit } from './rate-limit.js';

const MB = 1024 * 1024;

/** The largest WebSocket message a page may send (a post of 16,000 characters is far less). */
export const MAX_FRAME_BYTES = 256 * 1024;

/**
 * A request's headers must arrive within 15 s (a client sending them a byte at a time is cut off), and checks run
 * every 2 s; a whole request (an upload) may take Node's default 5 minutes.
 */
const LIMITS = { headersTimeout: 15_000, connectionsCheckingInterval: 2_000 } as const;

/** The page's files, by name: read once at start. */
const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface WebServerDeps {
  readonly host: string;
  readonly port: number;
  /** WEB_PUBLIC_URL's origin: requests that change something must come from there (else from the Host's). */
  readonly publicOrigin: string | undefined;
  /** WEB_PUBLIC_URL's host name: requests must be sent to it, a loopback name or an address. */
  readonly publicHost: string | undefined;
  /** WEB_TRUST_PROXY: reverse proxies whose X-Forwarded-For names the client (for rate limits). */
  readonly trustedProxies: ReadonlySet<string>;
  readonly rooms: readonly string[];
  readonly agents: readonly string[];
  readonly publicDir: string;
  /** Largest upload in bytes (0: uploads are off). */
  readonly maxUploadBytes: number;
  readonly access: Access;
  readonly connections: Connections;
  readonly ops: OpsApi;
  /** `/mcp`: the rooms over MCP for operators' agents (its own checks: a bearer token, the host, the origin). */
  readonly mcp: McpEndpoint;
  readonly files: HeldFiles;
  readonly people: () => Promise<string[]>;
  readonly signingIn: RateLimit;
  readonly uploading: RateLimit;
  readonly sink: () => AdapterSink | undefined;
  readonly clock: () => number;
  readonly log: Logger;
}

export class WebServer {
  private readonly server: Server;
  private readonly sockets: WebSocketServer;
  private readonly assets = new Map<string, { type: string; body: Buffer }>();

  constructor(private readonly deps: WebServerDeps) {
    for (const name of readdirSync(deps.publicDir)) {
      const type = TYPES[path.extname(name)];
      if (type) this.assets.set(name, { type, body: readFileSync(path.join(deps.publicDir, name)) });
    }
    this.sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
    this.server = createServer(LIMITS, (request, response) => {
      // A client that goes away mid-request, or a response to a closed connection: this request alone ends.
      request.on('error', (error) => deps.log.debug({ err: error }, 'a web room request broke off'));
      response.on('error', (error) => deps.log.debug({ err: error }, 'a web room answer could not be sent'));
      this.route(request, response).catch((error: unknown) => {
        // The client went away (an upload cut off): nobody to answer, and nothing wrong with the bridge.
        if (request.destroyed && !request.complete) return;
        deps.log.error({ err: error, method: request.method }, 'web room request failed');
        refuse(response, 500, `the request failed: ${describeError(error)}`);
      });
    });
    this.server.on('upgrade', (request, socket, head) => {
      // Until the socket is a WebSocket nothing else listens for its errors (a reset while the session is read).
      socket.on('error', (error) => deps.log.debug({ err: error }, 'a web room connection broke off'));
      this.upgrade(request, socket, head).catch((error: unknown) => {
        deps.log.warn({ err: error }, 'a web room connection failed');
        socket.destroy();
      });
    });
  }

  /** Listens; resolves with the port (WEB_PORT 0 picks a free one). */
  listen(): Promise<number> {
    const { host, port } = this.deps;
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  get listening(): boolean {
    return this.server.listening;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.sockets.close();
      void this.deps.mcp.close();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private async route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { deps } = this;
    const url = new URL(request.url ?? '/', 'http://room');
    const method = request.method ?? 'GET';
    const changes = method !== 'GET' && method !== 'HEAD';
    if (url.pathname === '/mcp') return deps.mcp.handle(request, response);
    if (!ownHost(request, deps.publicHost)) {
      send(response, 421, wrongHostPage(), 'text/html; charset=utf-8');
      return;
    }
    if (!sameOrigin(request, deps.publicOrigin, changes)) {
      refuse(response, 403, 'cross-site requests are refused');
      return;
    }
    if (url.pathname === '/favicon.ico') {
      send(response, 204, '', 'text/plain');
      return;
    }
    const segments = url.pathname.split('/').filter(Boolean);
    if (segments[0] === 'static' && segments.length === 2 && method === 'GET') {
      const asset = this.assets.get(segments[1] ?? '');
      if (asset && !segments[1]?.endsWith('.html')) send(response, 200, asset.body, asset.type);
      else refuse(response, 404, 'no such file');
      return;
    }
    if (segments[0] === 'signin' && segments.length === 2) {
      if (!deps.signingIn.take(clientAddress(request, deps.trustedProxies), deps.clock())) {
        refuse(response, 429, 'too many sign-in attempts: wait a minute');
        return;
      }
      const code = segments[1] ?? '';
      if (method === 'GET') await deps.access.page(response, code);
      else if (method === 'POST') await deps.access.signIn(response, code);
      else refuse(response, 405, 'GET or POST');
      return;
    }
    const viewer = await deps.access.viewer(request);
    if (url.pathname === '/signout' && method === 'POST') {
      await deps.access.signOut(response, viewer);
      if (viewer) deps.connections.closeSession(viewer.session, 'You signed out.');
      return;
    }
    if (!viewer) {
      if (segments[0] === 'api') refuse(response, 401, 'not signed in');
      else send(response, 401, signedOutPage(), 'text/html; charset=utf-8');
      return;
    }
    await this.signedIn(request, response, viewer, url, segments, method);
  }

  private async signedIn(
    request: IncomingMessage,
    response: ServerResponse,
    viewer: Viewer,
    url: URL,
    segments: string[],
    method: string,
  ): Promise<void> {
    const { deps } = this;
    const [first, second, third, fourth] = segments;
    if (method === 'GET' && segments.length === 0) {
      send(response, 302, '', 'text/plain', { location: `/room/${deps.rooms[0] ?? 'general'}` });
      return;
    }
    if (method === 'GET' && first === 'room' && segments.length === 2) {
      if (!deps.rooms.includes(second ?? ''))
        send(response, 404, noSuchRoomPage(deps.rooms), 'text/html; charset=utf-8');
      else this.asset(response, 'room.html');
      return;
    }
    if (method === 'GET' && first === 'ops' && segments.length === 1) {
      if (viewer.operator) this.asset(response, 'ops.html');
      else send(response, 403, notOperatorPage(deps.rooms[0] ?? 'general'), 'text/html; charset=utf-8');
      return;
    }
    if (first !== 'api') {
      refuse(response, 404, 'no such page');
      return;
    }
    if (second === 'ops') {
      if (!viewer.operator) refuse(response, 403, 'the operator console is for operators');
      else if (!(await deps.ops.handle(request, response, viewer, url))) refuse(response, 404, 'no such call');
      return;
    }
    if (method === 'GET' && second === 'me') {
      sendJson(response, 200, {
        name: viewer.name,
        operator: viewer.operator,
        rooms: deps.rooms,
        agents: deps.agents,
        people: await deps.people(),
        // What the page refuses itself, as the server would: a longer message, more files, a larger file.
        limits: { text: MAX_TEXT, files: MAX_FILES, fileBytes: deps.maxUploadBytes },
      });
      return;
    }
    if (second === 'rooms' && third && deps.rooms.includes(third)) {
      if (method === 'GET' && fourth === 'history') return this.history(response, third, url);
      if (method === 'POST' && fourth === 'files') return this.upload(request, response, viewer, third, url);
    }
    refuse(response, 404, 'no such call');
  }

  private asset(response: ServerResponse, name: string): void {
    const asset = this.assets.get(name);
    if (asset) send(response, 200, asset.body, asset.type);
    else refuse(response, 500, `${name} is missing from the installation`);
  }

  /** Older messages, for a page scrolled to the top. */
  private async history(response: ServerResponse, room: string, url: URL): Promise<void> {
    const before = Number(url.searchParams.get('before'));
    const page =
      before > 0 ? ((await this.deps.sink()?.transcript?.(roomKey(room), { before, limit: PAGE_SIZE })) ?? []) : [];
    sendJson(response, 200, {
      messages: page.map(wireMessage),
      older: page.length >= PAGE_SIZE ? (page[0]?.cursor ?? null) : null,
    });
  }

  /** A file for the next message: held until the message takes it. */
  private async upload(
    request: IncomingMessage,
    response: ServerResponse,
    viewer: Viewer,
    room: string,
    url: URL,
  ): Promise<void> {
    const { deps } = this;
    if (deps.maxUploadBytes === 0) {
      refuse(response, 403, 'uploads are off in this room (WEB_MAX_FILE_MB=0)');
      return;
    }
    if (!deps.uploading.take(viewer.name.toLowerCase(), deps.clock())) {
      refuse(response, 429, 'too many uploads: wait a few seconds');
      return;
    }
    const name = (url.searchParams.get('name') ?? '').slice(0, 255) || 'file';
    const full = () =>
      refuse(
        response,
        503,
        `too many uploaded files are waiting for their messages (${Math.round(deps.files.totalBytes / MB)} MB in all): send yours, or try again in a few minutes`,
      );
    if (!deps.files.fits(Number(request.headers['content-length'] ?? 0))) {
      request.resume();
      return full();
    }
    let bytes: Buffer;
    try {
      bytes = await readBody(request, deps.maxUploadBytes);
    } catch (error) {
      if (!(error instanceof TooLarge)) throw error;
      refuse(response, 413, `the file is larger than the ${Math.round(deps.maxUploadBytes / MB)} MB limit`);
      return;
    }
    const type = request.headers['content-type'];
    const id = deps.files.hold({ owner: viewer.name, room, name, mimeType: type || undefined, bytes });
    if (id === undefined) return full();
    sendJson(response, 201, { file: id, name, size: bytes.byteLength });
  }

  /** A page's WebSocket: same origin and a session, else refused before it opens. */
  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const { deps } = this;
    const url = new URL(request.url ?? '/', 'http://room');
    const room = url.searchParams.get('room') ?? '';
    const refuseUpgrade = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (!ownHost(request, deps.publicHost)) return refuseUpgrade(421, 'Misdirected Request');
    if (url.pathname !== '/ws' || !deps.rooms.includes(room)) return refuseUpgrade(404, 'Not Found');
    if (!sameOrigin(request, deps.publicOrigin, true)) return refuseUpgrade(403, 'Forbidden');
    const viewer = await deps.access.viewer(request);
    if (!viewer) return refuseUpgrade(401, 'Unauthorized');
    const epoch = url.searchParams.get('epoch');
    const after = Number(url.searchParams.get('after'));
    this.sockets.handleUpgrade(request, socket, head, (ws) => {
      // A frame the server refuses (over the size limit, not UTF-8, not the protocol): `ws` has closed this socket
      // with the code that says why (1009, 1007, 1002); the bridge goes on.
      ws.on('error', (error: Error & { code?: string }) => {
        const detail = { room, person: viewer.name, code: error.code };
        deps.log.warn(detail, `a web room page sent a frame that is refused: ${error.message}`);
      });
      void deps.connections
        .accept(ws, viewer, room, epoch && Number.isInteger(after) ? { epoch, after } : undefined)
        .catch((error: unknown) => {
          deps.log.warn({ err: error, room }, 'a web room page could not be brought up to date');
          ws.close(1011, 'could not load the room');
        });
    });
  }
}
