import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { Settings } from './settings.js';

/** The client certificate, its key and the CA the engine's certificate must be signed by (PEM). */
export interface EngineTls {
  /** The folder they were read from (for messages). */
  readonly dir: string;
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** How to reach the Docker engine: a local socket (undefined path: the client's default) or TCP. */
export type EngineConnection =
  | { readonly kind: 'socket'; readonly path: string | undefined }
  | {
      readonly kind: 'tcp';
      readonly host: string;
      readonly port: number;
      /** Set when the engine speaks TLS; its certificate is then always verified against `ca`. */
      readonly tls: EngineTls | undefined;
    };

const CERT_FILES = ['ca.pem', 'cert.pem', 'key.pem'] as const;

type EngineSettings = Pick<Settings, 'DOCKER_HOST' | 'DOCKER_TLS_VERIFY' | 'DOCKER_CERT_PATH'>;

/**
 * DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH read the way the docker CLI reads them, including
 * what docker-modem's own reading misses: DOCKER_TLS_VERIFY=true (it knows only 1), the CLI's default
 * certificate folder ~/.docker, the default ports (2376 with TLS, 2375 without), and a missing certificate
 * file named as such instead of a raw ENOENT. Read at start-up, so a typo stops the bridge with one line.
 */
export function dockerEngine(settings: EngineSettings, home: string = homedir()): EngineConnection {
  const host = settings.DOCKER_HOST;
  if (!host) return { kind: 'socket', path: undefined };
  if (host.startsWith('unix://')) return { kind: 'socket', path: host.slice('unix://'.length) || undefined };
  let url: URL;
  try {
    url = new URL(host);
  } catch {
    throw new ConfigError('environment', 'DOCKER_HOST', `expected tcp://host:port (got "${host}")`);
  }
  if (!url.hostname || (url.pathname !== '' && url.pathname !== '/')) {
    throw new ConfigError('environment', 'DOCKER_HOST', `expected tcp://host:port (got "${host}")`);
  }
  // Docker's own rule: TLS when verification is asked for or certificates are given; 2376 is its TLS port.
  const useTls = settings.DOCKER_TLS_VERIFY || settings.DOCKER_CERT_PATH !== undefined || url.port === '2376';
  const port = url.port ? Number(url.port) : useTls ? 2376 : 2375;
  const tls = useTls ? readCertificates(settings.DOCKER_CERT_PATH ?? path.join(home, '.docker')) : undefined;
  // URL keeps the brackets of an IPv6 address; the request needs it bare.
  return { kind: 'tcp', host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port, tls };
}

function readCertificates(dir: string): EngineTls {
  const files: Partial<Record<(typeof CERT_FILES)[number], Buffer>> = {};
  for (const name of CERT_FILES) {
    try {
      files[name] = readFileSync(path.join(dir, name));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ConfigError(
        'environment',
        'DOCKER_CERT_PATH',
        code === 'ENOENT'
          ? `${path.join(dir, name)} does not exist (the folder must hold ca.pem, cert.pem and key.pem)`
          : `${path.join(dir, name)} cannot be read (${code ?? String(error)})`,
      );
    }
  }
  return { dir, ca: files['ca.pem'] as Buffer, cert: files['cert.pem'] as Buffer, key: files['key.pem'] as Buffer };
}
