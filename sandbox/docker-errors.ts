import type Dockerode from 'dockerode';
import type { Settings } from '../src/config/index.js';
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
  const words = (docker.json?.message ?? docker.message ?? describeError(error)).replace(/\s+/g, ' ').trim();
  // Some answers say it twice (`no such image: x: No such image: x`): once is enough.
  const half = words.length / 2 - 1;
  const once = words.slice(half + 2);
  return words.slice(half, half + 2) === ': ' && words.slice(0, half).toLowerCase() === once.toLowerCase()
    ? once
    : words;
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
  if (docker.statusCode === 404 && /no such image/i.test(engineMessage(error))) {
    const refused = settingRefused(error, { SANDBOX_IMAGE: context.image });
    if (refused) return refused;
  }
  return new SandboxError(`Docker refused the request: ${engineMessage(error)}`, { cause: error });
}

/**
 * What to do when the engine does not see DATA_DIR as the bridge does: it resolves bind mounts on
 * its own host, so a bridge in a container needs its data folder at the same path on both sides.
 */
export const SAME_PATH_FIX =
  "mount the data folder at the same path inside and outside the bridge's container, as compose.yaml does: " +
  '-v /srv/roundtable:/srv/roundtable -e DATA_DIR=/srv/roundtable';

/** The settings the engine checks when it creates and starts a sandbox container. */
export type EngineSettings = Pick<
  Settings,
  'SANDBOX_IMAGE' | 'SANDBOX_NETWORK' | 'SANDBOX_CPUS' | 'SANDBOX_MEMORY' | 'SANDBOX_PIDS' | 'DATA_DIR'
>;

type EngineSetting = keyof EngineSettings;

/**
 * Which setting a refusal is about, told by the engine's words, and what to do about it. The
 * engine checks these when a container is created (image, CPUs, memory) or started (network).
 */
const REFUSALS: ReadonlyArray<{
  readonly variable: EngineSetting;
  readonly about: (words: string, settings: Partial<EngineSettings>) => boolean;
  readonly fix: string | ((settings: Partial<EngineSettings>) => string);
}> = [
  {
    variable: 'SANDBOX_IMAGE',
    about: (words) =>
      /no such image|pull access denied|repository does not exist|invalid reference format/i.test(words),
    fix: 'build it with npm run sandbox:build, or correct SANDBOX_IMAGE',
  },
  {
    variable: 'SANDBOX_NETWORK',
    about: (words, settings) =>
      /\bnetwork\b/i.test(words) ||
      (settings.SANDBOX_NETWORK?.startsWith('container:') === true && /no such container/i.test(words)),
    fix: (settings) =>
      settings.SANDBOX_NETWORK?.startsWith('container:')
        ? 'docker ps lists the containers; none, the default, means no network'
        : 'docker network ls lists the networks; none, the default, means no network',
  },
  { variable: 'SANDBOX_CPUS', about: (words) => /\bcpus?\b|nanocpus/i.test(words), fix: 'lower SANDBOX_CPUS' },
  { variable: 'SANDBOX_MEMORY', about: (words) => /\bmemory\b/i.test(words), fix: 'change SANDBOX_MEMORY' },
  { variable: 'SANDBOX_PIDS', about: (words) => /\bpids?\b/i.test(words), fix: 'change SANDBOX_PIDS' },
  {
    variable: 'DATA_DIR',
    about: (words) => /\bmount\b|bind source path|\/workspace\b/i.test(words),
    fix: SAME_PATH_FIX,
  },
];

/**
 * The engine refused a sandbox container because of a setting: one line naming the variable, its
 * value and what Docker said (`SANDBOX_NETWORK=bridgee: Docker says network bridgee not found (…)`).
 * Undefined when the failure is no such refusal (the engine unreachable, or words that name no setting).
 */
export function settingRefused(error: unknown, settings: Partial<EngineSettings>): SandboxError | undefined {
  if (asDockerError(error).statusCode === undefined) return undefined;
  const words = engineMessage(error);
  const refusal = REFUSALS.find((rule) => settings[rule.variable] !== undefined && rule.about(words, settings));
  if (!refusal) return undefined;
  const fix = typeof refusal.fix === 'string' ? refusal.fix : refusal.fix(settings);
  return new SandboxError(`${refusal.variable}=${settings[refusal.variable]}: Docker says ${words} (${fix})`, {
    cause: error,
    problem: refusal.variable === 'SANDBOX_IMAGE' ? 'image' : 'other',
  });
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
