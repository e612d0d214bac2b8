import type Dockerode from 'dockerode';
import { describeError, SandboxError } from '../src/errors.js';

/** The shape of errors docker-modem produces: socket errors carry `code`, API errors `statusCode`. */
interface DockerErrorLike {
  readonly code?: string;
  readonly statusCode?: number;
  readonly json?: { readonly message?: string } | null;
  readonly message?: string;
}

function asDockerError(error: unknown): DockerErrorLike {
  return typeof error === 'object' && error !== null ? (error as DockerErrorLike) : {};
}

/** An API answer with this HTTP status (404 no such container, 409 conflict/not running, ...). */
export function hasStatus(error: unknown, ...statuses: number[]): boolean {
  const status = asDockerError(error).statusCode;
  return status !== undefined && statuses.includes(status);
}

/** The engine's own words for an API error, on one line. */
export function engineMessage(error: unknown): string {
  const docker = asDockerError(error);
  return (docker.json?.message ?? docker.message ?? describeError(error)).replace(/\s+/g, ' ').trim();
}

/** Where this client talks to the engine, for messages: a socket path or a URL. */
export function engineAddress(docker: Dockerode): string {
  const modem = docker.modem as { socketPath?: unknown; host?: string; port?: number | string; protocol?: string };
  if (typeof modem.socketPath === 'string') return modem.socketPath;
  if (modem.host) return `${modem.protocol ?? 'http'}://${modem.host}${modem.port ? `:${modem.port}` : ''}`;
  return 'the Docker socket';
}

const UNREACHABLE = new Set([
  'ENOENT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
]);

/**
 * Turns a failure talking to Docker into a SandboxError whose message is one line saying what
 * to do: the agent sees it as the bash tool's answer, the operator in /status and the log.
 */
export function toSandboxError(error: unknown, context: { docker: Dockerode; image: string }): SandboxError {
  if (error instanceof SandboxError) return error;
  const docker = asDockerError(error);
  const where = engineAddress(context.docker);
  if (docker.code === 'EACCES') {
    return new SandboxError(
      `permission denied on ${where}: run the bridge as a user in the docker group (or as root)`,
      { cause: error, problem: 'engine' },
    );
  }
  if (docker.code && UNREACHABLE.has(docker.code)) {
    return new SandboxError(
      `Docker is not reachable at ${where}: start the Docker engine (dockerd) or set DOCKER_HOST`,
      { cause: error, problem: 'engine' },
    );
  }
  if (docker.statusCode === 404 && /no such image|not found/i.test(engineMessage(error))) {
    return imageMissing(context.image, error);
  }
  return new SandboxError(`Docker refused the request: ${engineMessage(error)}`, { cause: error });
}

export function imageMissing(image: string, cause?: unknown): SandboxError {
  return new SandboxError(
    `sandbox image ${image} is missing: run npm run sandbox:build (or docker build -t ${image} sandbox/)`,
    { cause, problem: 'image' },
  );
}

/**
 * The host side of a workspace failed (the template folder vanished, the data folder filled up):
 * a file-system problem, so it must not read as Docker being unreachable.
 */
export function workspaceError(error: unknown, workspaceDir: string, templateDir: string | undefined): SandboxError {
  const failure = error as NodeJS.ErrnoException;
  const message =
    templateDir && failure.code === 'ENOENT' && failure.path === templateDir
      ? `the workspace template folder ${templateDir} (SANDBOX_TEMPLATE_DIR) does not exist`
      : `the workspace ${workspaceDir} could not be prepared: ${failure.code ?? describeError(error)}`;
  return new SandboxError(message, { cause: error, problem: 'workspace' });
}
