import Dockerode from 'dockerode';
import { dockerEngine, type Settings } from '../src/config/index.js';
import type { Logger } from '../src/log.js';
import { Deadline } from './deadline.js';

/** How long the engine may take to say who it is (at start, with bridges sharing the store). */
const ENGINE_ID_TIMEOUT_MS = 10_000;

/**
 * The Docker client for DOCKER_HOST / DOCKER_TLS_VERIFY / DOCKER_CERT_PATH as the settings read them
 * (`.env` included, which docker-modem alone would not see). Every connection field is given, so
 * what the modem reads from the process environment on its own never mixes in.
 */
export function engineClient(
  settings: Pick<Settings, 'DOCKER_HOST' | 'DOCKER_TLS_VERIFY' | 'DOCKER_CERT_PATH'>,
): Dockerode {
  const engine = dockerEngine(settings);
  if (engine.kind === 'socket') {
    // Without a path the modem finds the socket itself (/var/run/docker.sock or ~/.docker/run/docker.sock).
    if (engine.path === undefined && !process.env.DOCKER_HOST) return new Dockerode();
    return new Dockerode({
      socketPath: engine.path ?? '/var/run/docker.sock',
      host: undefined,
      port: undefined,
      protocol: undefined,
    });
  }
  const { tls } = engine;
  return new Dockerode({
    socketPath: undefined,
    host: engine.host,
    port: engine.port,
    protocol: tls ? 'https' : 'http',
    pathPrefix: '/',
    ca: tls?.ca,
    cert: tls?.cert,
    key: tls?.key,
  } as Dockerode.DockerOptions);
}

/** The engine's identity (Docker's engine ID, from `docker info`); undefined when it does not answer in time. */
export async function engineId(docker: Dockerode, signal: AbortSignal, log: Logger): Promise<string | undefined> {
  const deadline = new Deadline(ENGINE_ID_TIMEOUT_MS, signal);
  try {
    const info = (await deadline.race(docker.info())) as { ID?: string };
    return info.ID || undefined;
  } catch (error) {
    log.warn({ err: error }, "the Docker engine's identity could not be read");
    return undefined;
  } finally {
    deadline.clear();
  }
}
