/**
 * The web room's bridge (fake model, fake sandbox) with its MCP endpoint, and the SDK's own client connected to it
 * with an operator's token, as an operator's coding agent connects.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { issueToken } from '../../src/mcp-serve/tokens.js';
import type { WebHarness } from '../web/web-harness.js';

/** A token for `name`, invited as an operator first unless told otherwise. */
export async function operatorToken(h: WebHarness, name: string, operator = true): Promise<string> {
  await h.invite(name, { operator });
  const made = await issueToken(h.store.people, name, Date.now());
  if ('problem' in made) throw new Error(made.problem);
  return made.token;
}

/** An MCP client connected to the bridge's `/mcp` with this bearer credential. */
export async function connect(url: string, bearer: string): Promise<Client> {
  const client = new Client({ name: 'operator-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return client;
}

/** A tool's text answer (its first text block); the call must not be an error unless `allowError`. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  allowError = false,
): Promise<{ text: string; structured: Record<string, unknown> | undefined; isError: boolean }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
  if (result.isError && !allowError) throw new Error(`${name} failed: ${text}`);
  return { text, structured: result.structuredContent, isError: result.isError === true };
}

/** A raw POST to `/mcp` (an initialize), for what a client would not send. */
export function rawInitialize(url: string, headers: Record<string, string>, body?: string): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body:
      body ??
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
  });
}

export interface HistoryMessage {
  readonly author: string;
  readonly kind: string;
  readonly text: string;
}

/** `read_history`'s messages and the cursor of older ones. */
export async function history(
  client: Client,
  args: Record<string, unknown>,
): Promise<{ messages: HistoryMessage[]; older: number | null }> {
  const read = await call(client, 'read_history', args);
  const structured = read.structured ?? {};
  return {
    messages: (structured.messages ?? []) as HistoryMessage[],
    older: (structured.older ?? null) as number | null,
  };
}
