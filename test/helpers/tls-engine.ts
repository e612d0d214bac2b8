/**
 * The local Docker engine reached the way a remote one is: over TCP with TLS, through a proxy on 127.0.0.1 that
 * forwards to the engine's socket and requires a client certificate signed by a CA made here (with openssl).
 * The system's dockerd is not touched.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';

export interface TlsEngine {
  readonly port: number;
  /** ca.pem, cert.pem and key.pem for the client (DOCKER_CERT_PATH). */
  readonly certDir: string;
  /** A folder with a client certificate from another CA (refused by the proxy). */
  readonly strangerDir: string;
  /** Connections that presented a valid client certificate. */
  readonly accepted: () => number;
  close(): Promise<void>;
}

function openssl(cwd: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A CA, and a key + certificate it signed (`name`.pem, `name`-key.pem), with `extensions` for the certificate. */
function issue(dir: string, ca: string, name: string, subject: string, extensions: string): void {
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(
    dir,
    'req',
    '-new',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    subject,
    '-keyout',
    `${name}-key.pem`,
    '-out',
    `${name}.csr`,
  );
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}-key.pem`,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  );
}

function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}-key.pem`,
    '-out',
    `${name}.pem`,
  );
}

export async function startTlsEngine(socketPath = '/var/run/docker.sock'): Promise<TlsEngine> {
  const dir = mkdtempSync(path.join(tmpdir(), 'roundtable-tls-'));
  makeCa(dir, 'ca');
  issue(
    dir,
    'ca',
    'server',
    '/CN=localhost',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
  );
  issue(dir, 'ca', 'client', '/CN=roundtable', 'extendedKeyUsage=clientAuth\n');
  makeCa(dir, 'other-ca');
  issue(dir, 'other-ca', 'stranger', '/CN=stranger', 'extendedKeyUsage=clientAuth\n');
  const certDir = path.join(dir, 'client');
  const strangerDir = path.join(dir, 'stranger');
  for (const [folder, cert] of [
    [certDir, 'client'],
    [strangerDir, 'stranger'],
  ] as const) {
    execFileSync('mkdir', [folder]);
    writeFileSync(path.join(folder, 'ca.pem'), readFileSync(path.join(dir, 'ca.pem')));
    writeFileSync(path.join(folder, 'cert.pem'), readFileSync(path.join(dir, `${cert}.pem`)));
    writeFileSync(path.join(folder, 'key.pem'), readFileSync(path.join(dir, `${cert}-key.pem`)));
  }
  let accepted = 0;
  const open = new Set<Socket>();
  const server = createServer(
    {
      key: readFileSync(path.join(dir, 'server-key.pem')),
      cert: readFileSync(path.join(dir, 'server.pem')),
      ca: readFileSync(path.join(dir, 'ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (client: TLSSocket) => {
      accepted += 1;
      const engine = connect(socketPath);
      open.add(client);
      open.add(engine);
      client.pipe(engine).pipe(client);
      const end = () => {
        client.destroy();
        engine.destroy();
        open.delete(client);
        open.delete(engine);
      };
      client.on('error', end).on('close', end);
      engine.on('error', end).on('close', end);
    },
  );
  // A refused handshake is the point of the test that makes one; nothing to report.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    certDir,
    strangerDir,
    accepted: () => accepted,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
