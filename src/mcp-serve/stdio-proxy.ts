/**
 * `npm run mcp` without options: the MCP endpoint of a running bridge, offered over stdio to a client that starts
 * servers as processes. Every message is passed through, unchanged, to the bridge's `/mcp` with the operator's token
 * (the endpoint checks it at every request, so revoking it ends this too), and every answer back. The token is tried
 * before anything is read from stdin: a wrong or revoked one ends the process with one line on stderr.
 */

import type { Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describeError } from '../errors.js';

/** The longest line read from stdin (the endpoint takes far less in one request). */
const MAX_LINE_BYTES = 1024 * 1024;

export interface ProxyOptions {
  /** The bridge's endpoint (`http://localhost:8088/mcp`). */
  readonly url: URL;
  readonly token: string;
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
  /** A line for the operator (stderr): stdout is the protocol's. */
  readonly say: (line: string) => void;
}

/** Tries the token against the endpoint (a whole handshake); rejects with the reason it failed. */
export async function tryToken(url: URL, token: string): Promise<void> {
  const client = new Client({ name: 'roundtable-mcp-check', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, headers(token));
  try {
    await client.connect(transport);
    await client.listTools();
    await transport.terminateSession();
  } finally {
    await client.close().catch(() => {});
  }
}

/** Passes messages between stdio and the endpoint until either side closes; resolves then. */
export async function proxyStdio(options: ProxyOptions): Promise<void> {
  const up = new StreamableHTTPClientTransport(options.url, headers(options.token));
  const stdin = (options.stdin ?? process.stdin) as Readable;
  const down = new StdioServerTransport(stdin, (options.stdout ?? process.stdout) as Writable, {
    maxBufferSize: MAX_LINE_BYTES,
  });
  const initializing = new Set<string | number>();
  let ended: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    ended = resolve;
  });
  // In the order they came: what follows `initialize` waits until the bridge has answered it (and named the session).
  let sending: Promise<void> = Promise.resolve();
  down.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'initialize' && 'id' in message) initializing.add(message.id);
    sending = sending.then(() => forward(message));
  };
  const forward = (message: JSONRPCMessage) =>
    up.send(message).catch((error: unknown) => {
      // Said on stderr already (onerror); a request gets its error answer, so the client is not left waiting.
      if ('method' in message && 'id' in message) {
        void down.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: describeError(error) } });
      }
    });
  up.onmessage = (message: JSONRPCMessage) => {
    if ('result' in message && initializing.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') up.setProtocolVersion(version);
    }
    void down.send(message);
  };
  up.onerror = (error) => options.say(`roundtable mcp: ${describeError(error)}`);
  down.onerror = (error) => options.say(`roundtable mcp: ${describeError(error)}`);
  down.onclose = () => {
    void up
      .terminateSession()
      .catch(() => {})
      .finally(() => void up.close().finally(ended));
  };
  await up.start();
  await down.start();
  // The client closed its end: the session ends with it.
  stdin.once('end', () => void down.close());
  return done;
}

function headers(token: string) {
  return { requestInit: { headers: { authorization: `Bearer ${token}` } } };
}
