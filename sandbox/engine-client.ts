import Dockerode from 'dockerode';
import { dockerEngine, type Settings } from '../src/config/index.js';

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
