/**
 * Who may use `/mcp`: an operator's token or an operator's web session, checked at every request; absent, wrong,
 * revoked or a member's → refused. Requests under another site's name or from another site's page are refused
 * (DNS rebinding), and a body over the limit is refused without taking the bridge down.
 */
import { request } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../adapters/web/server.js';
import { signIn, startWebHarness, type WebHarness } from '../web/web-harness.js';
import { call, connect, operatorToken, rawInitialize } from './mcp-harness.js';

let h: WebHarness | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close().catch(() => {});
  client = undefined;
  await h?.close();
  h = undefined;
});

/** The session token of a signed-in person (what their cookie carries). */
const sessionToken = (cookie: string) => cookie.slice(cookie.indexOf('=') + 1);

/** A POST sent with a Host header of our choosing (fetch sets its own). */
function postWithHost(url: string, host: string, headers: Record<string, string>): Promise<number> {
  const target = new URL(`${url}/mcp`);
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        host: target.hostname,
        port: target.port,
        path: '/mcp',
        method: 'POST',
        headers: {
          host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    sent.on('error', reject);
    sent.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
  });
}

describe('who may use the rooms over MCP', () => {
  it('answers 401 with WWW-Authenticate without a token or with a wrong one', async () => {
    h = await startWebHarness();
    const absent = await rawInitialize(h.url, {});
    expect(absent.status).toBe(401);
    expect(absent.headers.get('www-authenticate')).toBe('Bearer realm="roundtable"');
    const token = await operatorToken(h, 'ana');
    const wrong = `${token.slice(0, -4)}AAAA`;
    for (const bearer of [wrong, 'not-a-token', `${token}x`]) {
      const refused = await rawInitialize(h.url, { authorization: `Bearer ${bearer}` });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="roundtable", error="invalid_token"');
    }
    await expect(connect(h.url, wrong)).rejects.toThrow(/an operator token is needed/);
  });

  it('refuses a revoked token at its next call, and a demoted operator at once', async () => {
    h = await startWebHarness();
    const token = await operatorToken(h, 'ana');
    client = await connect(h.url, token);
    expect((await call(client, 'list_rooms')).isError).toBe(false);
    expect(await h.store.people.revokeTokens('ana')).toBe(1);
    await expect(client.callTool({ name: 'list_rooms', arguments: {} })).rejects.toThrow(/an operator token is needed/);
    await expect(connect(h.url, token)).rejects.toThrow(/an operator token is needed/);
    const again = await operatorToken(h, 'ana');
    client = await connect(h.url, again);
    await h.invite('ana', { operator: false });
    await expect(client.callTool({ name: 'list_rooms', arguments: {} })).rejects.toThrow(
      /the MCP endpoint is for operators/,
    );
  });

  it("takes an operator's web session, and refuses a member's", async () => {
    h = await startWebHarness();
    const ana = sessionToken(await signIn(await h.invite('ana', { operator: true })));
    const ben = sessionToken(await signIn(await h.invite('ben')));
    client = await connect(h.url, ana);
    expect((await call(client, 'status', { room: 'general' })).isError).toBe(false);
    const member = await rawInitialize(h.url, { authorization: `Bearer ${ben}` });
    expect(member.status).toBe(403);
    await expect(connect(h.url, ben)).rejects.toThrow(/the MCP endpoint is for operators/);
  });

  it("keeps a session to the credential that opened it: another operator's token finds no such session", async () => {
    h = await startWebHarness();
    client = await connect(h.url, await operatorToken(h, 'ana'));
    const other = await operatorToken(h, 'cleo');
    const session = (client.transport as { sessionId?: string } | undefined)?.sessionId ?? '';
    expect(session).not.toBe('');
    const answer = await rawInitialize(
      h.url,
      { authorization: `Bearer ${other}`, 'mcp-session-id': session },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    );
    expect(answer.status).toBe(404);
  });

  it('answers 503, not 401, while the store cannot check a token, and takes it again after', async () => {
    h = await startWebHarness();
    const harness = h;
    const token = await operatorToken(harness, 'ana');
    const people = harness.store.people;
    const lookUp = people.token.bind(people);
    people.token = async () => {
      throw new Error('database is locked');
    };
    const down = await rawInitialize(harness.url, { authorization: `Bearer ${token}` });
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    people.token = lookUp;
    client = await connect(harness.url, token);
    expect((await call(client, 'list_rooms')).isError).toBe(false);
  });

  it('refuses requests under another name or from another site (DNS rebinding)', async () => {
    h = await startWebHarness();
    const authorization = `Bearer ${await operatorToken(h, 'ana')}`;
    expect(await postWithHost(h.url, 'evil.example.com', { authorization })).toBe(421);
    expect(await postWithHost(h.url, `evil.example.com:${h.web.port}`, { authorization })).toBe(421);
    const crossSite = await rawInitialize(h.url, { authorization, origin: 'http://evil.example.com' });
    expect(crossSite.status).toBe(403);
    const sameSite = await rawInitialize(h.url, { authorization, origin: h.url });
    expect(sameSite.status).toBe(200);
  });

  it('refuses a body over the limit with 413 and goes on serving', async () => {
    h = await startWebHarness();
    const token = await operatorToken(h, 'ana');
    client = await connect(h.url, token);
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'post', arguments: { room: 'general', text: 'x'.repeat(MAX_FRAME_BYTES) } },
    });
    const session = (client.transport as { sessionId?: string } | undefined)?.sessionId ?? '';
    const answer = await rawInitialize(h.url, { authorization: `Bearer ${token}`, 'mcp-session-id': session }, huge);
    expect(answer.status).toBe(413);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toBe(
      `the request is over ${MAX_FRAME_BYTES} bytes`,
    );
    expect((await call(client, 'list_rooms')).isError).toBe(false);
    const tooLong = await call(client, 'post', { room: 'general', text: 'y'.repeat(16_001) }, true);
    expect(tooLong.isError).toBe(true);
  });
});
