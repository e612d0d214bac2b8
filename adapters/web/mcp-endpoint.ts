/**
 * `/mcp` on the web room's port: the bridge's rooms as an MCP server (Streamable HTTP, the SDK's server transport)
 * for an operator's coding agent. Every request carries `Authorization: Bearer` with an operator's MCP token
 * (`npm run mcp -- --new-token`) or an operator's web session token, checked against the store at every request (a
 * revoked token or a demoted operator is refused at once); without one the answer is 401, and there is nothing to
 * reach. Requests must be sent to one of the room's own names and, when a browser says where they come from, from
 * its own origin (against DNS rebinding); bodies are bounded as the room's WebSocket frames are.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../src/log.js';
import { authFor, createOperatorServer, type OperatorDesk } from '../../src/mcp-serve/server.js';
import { looksLikeToken, tokenPerson } from '../../src/mcp-serve/tokens.js';
import type { PeoplePort, WebIdentity } from '../../src/store/port.js';
import type { Access } from './access.js';
import { expectedOrigin, ownHost, readBody, send, TooLarge } from './http.js';
import { digest, looksLikeSecret } from './secrets.js';

/** MCP sessions open at once; the one unused longest is closed for a new one. */
const MAX_SESSIONS = 64;
/** A session unused this long is closed. */
const SESSION_IDLE_MS = 60 * 60 * 1000;

export interface McpEndpointDeps {
  readonly desk: OperatorDesk;
  readonly people: PeoplePort;
  readonly access: Access;
  readonly publicHost: string | undefined;
  readonly publicOrigin: string | undefined;
  /** The largest request body (the web room's frame limit). */
  readonly maxBodyBytes: number;
  readonly clock: () => number;
  readonly log: Logger;
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  /** The digest of the credential that opened it: only that one may use it. */
  readonly credential: string;
  used: number;
}

export class McpEndpoint {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly deps: McpEndpointDeps) {}

  /** Answers a request for `/mcp`. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { deps } = this;
    if (!ownHost(request, deps.publicHost)) return answer(response, 421, 'this server answers at its own address only');
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== expectedOrigin(request, deps.publicOrigin)) {
      return answer(response, 403, 'cross-site requests are refused');
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    let person: WebIdentity | undefined;
    try {
      person = bearer ? await this.person(bearer) : undefined;
    } catch (error) {
      // The store cannot say now (an outage): not a wrong token, so the client keeps it and tries again.
      request.resume();
      deps.log.warn({ err: error }, 'an MCP token could not be checked');
      return answer(response, 503, 'the bridge cannot check tokens now: try again shortly', { 'retry-after': '5' });
    }
    if (!bearer || !person) {
      request.resume();
      deps.log.debug({ method: request.method, bearer: bearer !== undefined }, 'an MCP request without a valid token');
      const error = bearer ? ', error="invalid_token"' : '';
      return answer(response, 401, 'an operator token is needed (npm run mcp -- --new-token <name>)', {
        'www-authenticate': `Bearer realm="roundtable"${error}`,
      });
    }
    if (!person.operator) {
      request.resume();
      return answer(response, 403, 'the MCP endpoint is for operators');
    }
    const credential = digest(bearer);
    let body: unknown;
    if (request.method === 'POST') {
      try {
        body = JSON.parse((await readBody(request, deps.maxBodyBytes)).toString('utf8'));
      } catch (error) {
        if (error instanceof TooLarge)
          return rpcError(response, 413, -32600, `the request is over ${error.limit} bytes`);
        return rpcError(response, 400, -32700, 'the body is not JSON');
      }
    }
    const sessionId = request.headers['mcp-session-id'];
    let session: Session | undefined;
    if (typeof sessionId === 'string') {
      session = this.sessions.get(sessionId);
      // Another credential's session is as unknown as one that ended.
      if (!session || session.credential !== credential) {
        request.resume();
        return rpcError(response, 404, -32001, 'no such session: initialize again');
      }
    } else if (request.method === 'POST' && isInitializeRequest(body)) {
      session = await this.open(credential);
    } else {
      request.resume();
      return rpcError(response, 400, -32000, 'no session: send initialize first');
    }
    session.used = deps.clock();
    const authed = Object.assign(request, { auth: authFor(person, credential) });
    await session.transport.handleRequest(authed, response, body);
  }

  /** Closes every session (the bridge is stopping). */
  async close(): Promise<void> {
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(open.map((s) => s.server.close()));
  }

  /** Who the bearer is now: an MCP token's operator, or a web session's person. */
  private async person(bearer: string): Promise<WebIdentity | undefined> {
    if (looksLikeToken(bearer)) return tokenPerson(this.deps.people, bearer, this.deps.clock());
    if (looksLikeSecret(bearer)) return this.deps.access.identity(digest(bearer));
    return undefined;
  }

  private async open(credential: string): Promise<Session> {
    this.sweep();
    const server = createOperatorServer(this.deps.desk, this.deps.log);
    let session: Session | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        if (session) this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    session = { transport, server, credential, used: this.deps.clock() };
    await server.connect(transport);
    return session;
  }

  /** Closes idle sessions, and the one unused longest when there are too many. */
  private sweep(): void {
    const now = this.deps.clock();
    const byUse = [...this.sessions.entries()].sort((a, b) => a[1].used - b[1].used);
    for (const [index, [id, session]] of byUse.entries()) {
      const excess = byUse.length - index >= MAX_SESSIONS;
      if (!excess && now - session.used < SESSION_IDLE_MS) break;
      this.sessions.delete(id);
      void session.server.close().catch(() => {});
    }
  }
}

function answer(
  response: ServerResponse,
  status: number,
  error: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  send(response, status, JSON.stringify({ error }), 'application/json; charset=utf-8', headers);
}

function rpcError(response: ServerResponse, status: number, code: number, message: string): void {
  const body = { jsonrpc: '2.0', error: { code, message }, id: null };
  send(response, status, JSON.stringify(body), 'application/json; charset=utf-8');
}
