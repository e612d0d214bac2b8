import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineClient } from '../../sandbox/engine-client.js';
import { dockerEngine, readSettings } from '../../src/config/index.js';

const folder = mkdtempSync(path.join(tmpdir(), 'roundtable-certs-'));
const certs = path.join(folder, 'certs');
mkdirSync(certs);
for (const name of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(path.join(certs, name), `${name} contents`);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const engine = (env: Record<string, string>, home = folder) => dockerEngine(readSettings(env), home);

describe('the Docker engine settings (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH)', () => {
  it('refuses bind workspaces on a tcp:// engine in one line naming both settings', () => {
    expect(() => readSettings({ DOCKER_HOST: 'tcp://10.0.0.5:2376' })).toThrow(
      'environment: SANDBOX_WORKSPACES: bind cannot work with DOCKER_HOST=tcp://10.0.0.5:2376: ' +
        "a remote engine cannot mount this machine's DATA_DIR; set SANDBOX_WORKSPACES=volume",
    );
    expect(readSettings({ DOCKER_HOST: 'tcp://10.0.0.5:2376', SANDBOX_WORKSPACES: 'volume' }).SANDBOX_WORKSPACES).toBe(
      'volume',
    );
    expect(readSettings({ DOCKER_HOST: 'unix:///run/docker.sock' }).SANDBOX_WORKSPACES).toBe('bind');
  });

  it('names SANDBOX_WORKSPACES and DOCKER_HOST when their values are not understood', () => {
    expect(() => readSettings({ SANDBOX_WORKSPACES: 'nfs' })).toThrow(/SANDBOX_WORKSPACES/);
    expect(() => readSettings({ DOCKER_HOST: 'ssh://me@box' })).toThrow(
      /DOCKER_HOST: expected unix:\/\/\/path\/to\/docker.sock or tcp:\/\/host:port/,
    );
  });

  it('uses the local socket without DOCKER_HOST, and the given one with unix://', () => {
    expect(engine({})).toEqual({ kind: 'socket', path: undefined });
    expect(engine({ DOCKER_HOST: 'unix:///run/user/1000/docker.sock' })).toEqual({
      kind: 'socket',
      path: '/run/user/1000/docker.sock',
    });
  });

  it('speaks TLS with DOCKER_TLS_VERIFY=true or =1, reading the three files of DOCKER_CERT_PATH', () => {
    for (const verify of ['1', 'true']) {
      const found = engine({
        DOCKER_HOST: 'tcp://engine.example:2376',
        SANDBOX_WORKSPACES: 'volume',
        DOCKER_TLS_VERIFY: verify,
        DOCKER_CERT_PATH: certs,
      });
      expect(found).toMatchObject({ kind: 'tcp', host: 'engine.example', port: 2376, tls: { dir: certs } });
      expect(found.kind === 'tcp' && found.tls?.ca.toString()).toBe('ca.pem contents');
    }
  });

  it('takes the certificates from ~/.docker when DOCKER_CERT_PATH is not set, as the docker CLI does', () => {
    const home = path.join(folder, 'home');
    mkdirSync(path.join(home, '.docker'), { recursive: true });
    for (const name of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(path.join(home, '.docker', name), name);
    const found = engine({ DOCKER_HOST: 'tcp://10.0.0.5', SANDBOX_WORKSPACES: 'volume', DOCKER_TLS_VERIFY: '1' }, home);
    expect(found).toMatchObject({ kind: 'tcp', port: 2376, tls: { dir: path.join(home, '.docker') } });
  });

  it('defaults the port to 2375 without TLS and 2376 with it', () => {
    expect(engine({ DOCKER_HOST: 'tcp://10.0.0.5', SANDBOX_WORKSPACES: 'volume' })).toEqual({
      kind: 'tcp',
      host: '10.0.0.5',
      port: 2375,
      tls: undefined,
    });
  });

  it('names DOCKER_CERT_PATH and the missing file when a certificate is not there', () => {
    const empty = path.join(folder, 'empty');
    mkdirSync(empty);
    expect(() =>
      engine({ DOCKER_HOST: 'tcp://10.0.0.5:2376', SANDBOX_WORKSPACES: 'volume', DOCKER_CERT_PATH: empty }),
    ).toThrow(
      `environment: DOCKER_CERT_PATH: ${path.join(empty, 'ca.pem')} does not exist (the folder must hold ca.pem, cert.pem and key.pem)`,
    );
  });

  it('builds a client that talks TLS to the host and port the settings name', () => {
    const docker = engineClient(
      readSettings({
        DOCKER_HOST: 'tcp://127.0.0.1:12376',
        SANDBOX_WORKSPACES: 'volume',
        DOCKER_TLS_VERIFY: 'true',
        DOCKER_CERT_PATH: certs,
      }),
    );
    const modem = docker.modem as unknown as { host: string; port: number; protocol: string; socketPath?: string };
    expect({ host: modem.host, port: modem.port, protocol: modem.protocol, socket: modem.socketPath }).toEqual({
      host: '127.0.0.1',
      port: 12376,
      protocol: 'https',
      socket: undefined,
    });
  });
});
