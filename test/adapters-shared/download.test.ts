import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download } from '../../adapters/shared/download.js';

/** A local file host that records who asked for what. */
class Host {
  readonly seen: { path: string; authorization: string | undefined }[] = [];
  private server: Server | undefined;
  origin = '';

  constructor(private readonly handle: (req: IncomingMessage, res: ServerResponse) => void) {}

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      this.seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
      this.handle(req, res);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const other = new Host((_req, res) => res.writeHead(200).end('not from the platform'));
const platform = new Host((req, res) => {
  if (req.url === '/file') return void res.writeHead(200, { 'content-type': 'text/csv' }).end('a,b\n1,2\n');
  if (req.url === '/moved') return void res.writeHead(302, { location: '/file' }).end();
  if (req.url === '/away') return void res.writeHead(302, { location: `${other.origin}/stolen` }).end();
  if (req.url === '/big') return void res.writeHead(200, { 'content-length': '100' }).end('x'.repeat(100));
  if (req.url === '/chunked') {
    res.writeHead(200); // no length announced: the cap must hold while reading
    for (let i = 0; i < 10; i++) res.write('y'.repeat(20));
    return void res.end();
  }
  if (req.url === '/login') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>');
  res.writeHead(404).end();
});

beforeAll(async () => {
  await other.start();
  await platform.start();
});
afterAll(async () => {
  await other.stop();
  await platform.stop();
});

const options = (extra: Partial<Parameters<typeof download>[1]> = {}) => ({
  origins: new Set([platform.origin]),
  headers: { authorization: 'Bearer secret-token' },
  maxBytes: 50,
  ...extra,
});
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('download from the platform', () => {
  it('fetches from an allowed origin with the credentials, following redirects on it', async () => {
    expect(text(await download(`${platform.origin}/file`, options()))).toBe('a,b\n1,2\n');
    expect(text(await download(`${platform.origin}/moved`, options()))).toBe('a,b\n1,2\n');
    expect(platform.seen.at(-1)).toEqual({ path: '/file', authorization: 'Bearer secret-token' });
  });

  it('never asks another host, not even by a redirect, so the token stays with the platform', async () => {
    await expect(download(`${other.origin}/payload-url`, options())).rejects.toThrow(
      /fetched from the platform only, not 127\.0\.0\.1/,
    );
    await expect(download(`${platform.origin}/away`, options())).rejects.toThrow(/from the platform only/);
    await expect(download('not a url', options())).rejects.toThrow(/no valid address/);
    expect(other.seen).toEqual([]);
  });

  it('stops at the size limit, announced or not', async () => {
    await expect(download(`${platform.origin}/big`, options())).rejects.toThrow(/larger than 50 bytes/);
    await expect(download(`${platform.origin}/chunked`, options())).rejects.toThrow(/larger than 50 bytes/);
  });

  it('refuses an answer the platform check says is not the file', async () => {
    const check = (response: Response) =>
      response.headers.get('content-type')?.startsWith('text/html') ? 'a sign-in page' : undefined;
    await expect(download(`${platform.origin}/login`, options({ check }))).rejects.toThrow('a sign-in page');
    await expect(download(`${platform.origin}/missing`, options())).rejects.toThrow('the file host answered 404');
  });
});
