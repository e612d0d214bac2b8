/**
 * A long-lived process in a channel's container (an MCP stdio server): one Docker exec with stdin attached, stdout and
 * stderr apart (Docker's stream framing), in a session of its own that is killed from a second exec, as a timed-out
 * command is on the one-exec path. See docs/sandbox.md, "MCP servers in the sandbox", for why not the runner.
 */
import type { Duplex } from 'node:stream';
import type Dockerode from 'dockerode';
import { SandboxError } from '../src/errors.js';
import type { ProcessSpec, SandboxProcess } from '../src/ports.js';
import type { ChannelContainers, ChannelState } from './channel-containers.js';
import { HELPER_TIMEOUT_MS } from './container-probe.js';
import { WORKSPACE_MOUNT } from './container-spec.js';
import { hasStatus } from './docker-errors.js';
import { FrameDecoder } from './frame-decoder.js';
import { execSimple } from './run-exec.js';

/**
 * Runs in the container. $1 = working directory, $2 = file-size cap in 512-byte blocks (POSIX `ulimit -f`; empty for
 * none), then the command and its arguments. A Docker exec's process leads a session of its own, and `exec` keeps its
 * pid, so that pid is the process group and session the killer ends. The line `R<pid>` on stdout says the command was
 * found and is about to start: the bridge takes it off (no file: a command may empty /tmp).
 */
const LAUNCH = [
  'cd "$1" 2>/dev/null || exit 125',
  'command -v "$3" >/dev/null 2>&1 || exit 127',
  '[ -z "$2" ] || ulimit -f "$2" || exit 126',
  'shift 2',
  'printf "R%s\\n" "$$"',
  'exec "$@"',
].join('\n');
/** The launcher's line, and how long it may be. */
const READY = /^R(\d+)$/;
const READY_MAX = 32;

/** $1 = the process's pid. SIGTERM to its group, SIGKILL to what is left of its session after about two seconds. */
const KILLER = [
  'p=$1',
  'kill -TERM "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null',
  'i=0; while [ $i -lt 20 ] && kill -0 "-$p" 2>/dev/null; do sleep 0.1; i=$((i+1)); done',
  'kill -KILL "-$p" 2>/dev/null; command -v pkill >/dev/null 2>&1 && pkill -KILL -s "$p"',
  'exit 0',
].join('\n');

/** How long the killer may take (its own grace period is 2 s; a busy engine is slow to start an exec). */
const KILL_TIMEOUT_MS = 30_000;
/** After the killer, how long the output may take to close before the bridge lets go of it. */
const CLOSE_GRACE_MS = 5_000;
/** Output held for a listener not registered yet, per stream; past it the stream is paused. */
const UNHEARD_LIMIT = 1024 * 1024;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const START_FAILURES: Record<number, (spec: ProcessSpec) => string> = {
  125: (spec) => `the working directory does not exist in the sandbox: ${spec.cwd}`,
  126: () => 'the file-size limit (SANDBOX_DISK) could not be set for the process in the sandbox',
  127: (spec) => `command not found in the sandbox image: ${spec.command}`,
};

export interface SpawnOptions {
  /** No file the process writes may grow past this many bytes (RLIMIT_FSIZE, which it cannot raise). */
  readonly fsize?: number | undefined;
  /** Called when the process is used (spawned, written to): the container's idle timer starts again. */
  readonly onUse?: () => void;
  /** Called once when the process has ended. */
  readonly onEnd?: () => void;
  /** How long the engine may take to start it (default HELPER_TIMEOUT_MS: a busy engine takes seconds). */
  readonly startTimeoutMs?: number;
}

/** The environment the process gets on top of the container's: names checked, no `=` or NUL smuggled in. */
function execEnv(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).map(([name, value]) => {
    if (!ENV_NAME.test(name)) throw new SandboxError(`invalid environment variable name for a process: ${name}`);
    if (value.includes('\0')) throw new SandboxError(`environment variable ${name} contains a NUL byte`);
    return `${name}=${value}`;
  });
}

/** Starts the process; rejects with SandboxError when it cannot start (its command not in the image, say). */
export async function spawnInContainer(
  container: Dockerode.Container,
  spec: ProcessSpec,
  options: SpawnOptions = {},
): Promise<DockerProcess> {
  if (!spec.command) throw new SandboxError('no command to start');
  const blocks = options.fsize === undefined ? '' : String(Math.floor(Math.max(0, options.fsize) / 512));
  const exec = await container.exec({
    Cmd: ['sh', '-c', LAUNCH, 'roundtable-process', spec.cwd ?? WORKSPACE_MOUNT, blocks, spec.command, ...spec.args],
    Env: execEnv(spec.env),
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: true, Detach: false, Tty: false })) as Duplex;
  const child = new DockerProcess(container, exec, stream, options);
  await child.started(spec, options.startTimeoutMs ?? HELPER_TIMEOUT_MS);
  return child;
}

/**
 * Starts the process in the channel's container, made (or recreated once, when it vanished since it was last seen)
 * as for a command. Its writes count as use for the container's idle timer; it ends with the container.
 */
export async function spawnInChannel(
  containers: ChannelContainers,
  state: ChannelState,
  spec: ProcessSpec,
  fsize: number | undefined,
): Promise<DockerProcess> {
  const start = async (): Promise<DockerProcess> => {
    const live = await containers.ensure(state);
    let child: DockerProcess | undefined;
    const options: SpawnOptions = {
      fsize,
      onUse: () => containers.armIdle(state),
      onEnd: () => {
        if (child) state.processes.delete(child);
      },
    };
    child = await spawnInContainer(live.container, spec, options);
    // Ended already (between its start and now): not kept.
    if (!child.exited) state.processes.add(child);
    return child;
  };
  return start().catch((error: unknown) => {
    if (!hasStatus(error, 404, 409)) throw error;
    containers.forget(state);
    return start();
  });
}

type Listener<T> = (value: T) => void;

/** One output stream's listeners, and what arrived before the first was registered (bounded: see UNHEARD_LIMIT). */
class Output {
  readonly listeners: Listener<Uint8Array>[] = [];
  unheard: Buffer[] = [];
  unheardBytes = 0;

  deliver(chunk: Buffer): boolean {
    if (this.listeners.length === 0) {
      // Copied: the socket's buffer may be reused.
      this.unheard.push(Buffer.from(chunk));
      this.unheardBytes += chunk.length;
      return this.unheardBytes <= UNHEARD_LIMIT;
    }
    for (const listener of this.listeners) listener(chunk);
    return true;
  }

  add(listener: Listener<Uint8Array>): void {
    this.listeners.push(listener);
    const unheard = this.unheard;
    this.unheard = [];
    this.unheardBytes = 0;
    for (const chunk of unheard) listener(chunk);
  }
}

export class DockerProcess implements SandboxProcess {
  private readonly stdout = new Output();
  private readonly stderr = new Output();
  private readonly exitListeners: Listener<number | null>[] = [];
  /** Until the launcher's line arrives: the command was found and is starting, with this pid. */
  private ready = false;
  private pid: number | undefined;
  private preface = Buffer.alloc(0);
  private readyWaiter: ((ready: boolean) => void) | undefined;
  private code: number | null | undefined;
  private readonly ended: Promise<number | null>;
  private endedWith!: (code: number | null) => void;
  /** Killed by kill(), or its container went away: it ended with no code of its own. */
  private gone = false;
  private killing: Promise<void> | undefined;
  private finishing = false;

  constructor(
    private readonly container: Dockerode.Container,
    private readonly exec: Dockerode.Exec,
    private readonly stream: Duplex,
    private readonly options: SpawnOptions,
  ) {
    this.ended = new Promise((resolve) => {
      this.endedWith = resolve;
    });
    const decoder = new FrameDecoder((payload, kind) => this.onPayload(payload, kind));
    stream.on('data', (chunk: Buffer) => decoder.write(chunk));
    stream.once('end', () => void this.finish());
    stream.once('close', () => void this.finish());
    // Every error, not only the first: a write racing the end may fail too, and an unheard error would throw.
    stream.on('error', () => void this.finish());
    this.used();
  }

  /** Resolves once the command is found and starting; rejects with why it could not start. */
  async started(spec: ProcessSpec, timeoutMs: number): Promise<void> {
    if (this.ready) return;
    let timer: NodeJS.Timeout | undefined;
    const ready = await new Promise<boolean | undefined>((resolve) => {
      this.readyWaiter = resolve;
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    clearTimeout(timer);
    this.readyWaiter = undefined;
    if (ready) return;
    if (ready === undefined) {
      // Slow is not broken: say so. Nothing said its pid: letting go of the stream closes its stdin, if it started.
      this.gone = true;
      this.stream.destroy();
      await this.ended;
      throw new SandboxError(
        `the process did not start within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`} ` +
          '(the machine or the Docker engine is overloaded); try again',
      );
    }
    const code = await this.ended;
    const failure = code === null ? undefined : START_FAILURES[code];
    const said = Buffer.concat(this.stderr.unheard).toString('utf8').trim().slice(0, 300);
    throw new SandboxError(
      failure ? failure(spec) : `the process could not start in the sandbox${said ? `: ${said}` : ''}`,
    );
  }

  write(chunk: string | Uint8Array): void {
    if (this.finishing || this.killing || this.stream.destroyed) return;
    this.stream.write(chunk);
    this.used();
  }

  onStdout(listener: Listener<Uint8Array>): void {
    this.stdout.add(listener);
    this.resume();
  }

  onStderr(listener: Listener<Uint8Array>): void {
    this.stderr.add(listener);
    this.resume();
  }

  onExit(listener: Listener<number | null>): void {
    if (this.code !== undefined) queueMicrotask(() => listener(this.code ?? null));
    else this.exitListeners.push(listener);
  }

  kill(): Promise<void> {
    this.killing ??= this.stop();
    return this.killing;
  }

  get exited(): boolean {
    return this.code !== undefined;
  }

  /** The container is going away (reset, idle, shutdown): the process ends with it, with no code of its own. */
  containerGone(): void {
    this.gone = true;
  }

  private async stop(): Promise<void> {
    if (this.code !== undefined) return;
    this.gone = true;
    await this.killSession();
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      this.ended.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    // Something still holds the output open (a process that left the session): let go of it.
    if (!closed) this.stream.destroy();
    await this.ended;
  }

  /** SIGTERM, then SIGKILL, to the process's group and session, from a second exec. */
  private async killSession(): Promise<void> {
    if (this.pid === undefined) return;
    const killer = ['sh', '-c', KILLER, 'roundtable-kill', String(this.pid)];
    await execSimple(this.container, killer, KILL_TIMEOUT_MS).catch(() => undefined);
  }

  private onPayload(payload: Buffer, kind: number): void {
    let chunk = payload;
    if (kind === 1 && !this.ready) {
      this.preface = Buffer.concat([this.preface, chunk]);
      const end = this.preface.indexOf(10);
      if (end < 0) {
        if (this.preface.length > READY_MAX) this.stream.destroy();
        return;
      }
      const pid = READY.exec(this.preface.subarray(0, end).toString('latin1'))?.[1];
      if (!pid) {
        this.stream.destroy();
        return;
      }
      this.pid = Number(pid);
      this.ready = true;
      this.readyWaiter?.(true);
      chunk = this.preface.subarray(end + 1);
      this.preface = Buffer.alloc(0);
      if (chunk.length === 0) return;
    }
    const keep = (kind === 2 ? this.stderr : this.stdout).deliver(chunk);
    if (!keep) this.stream.pause();
  }

  private resume(): void {
    if (this.stdout.unheardBytes <= UNHEARD_LIMIT && this.stderr.unheardBytes <= UNHEARD_LIMIT) this.stream.resume();
  }

  private used(): void {
    this.options.onUse?.();
  }

  private async finish(): Promise<void> {
    if (this.code !== undefined || this.finishing) return;
    this.finishing = true;
    this.stream.destroy();
    let code: number | null = null;
    if (!this.gone) {
      const info = await this.exec.inspect().catch(() => undefined);
      // Still running: the bridge lost the stream, not the process, which is then stopped.
      if (info?.Running) {
        await this.killSession();
      } else if (info && typeof info.ExitCode === 'number' && !this.gone && (await this.containerRunning())) {
        code = info.ExitCode;
      }
    }
    this.code = code;
    this.readyWaiter?.(this.ready);
    this.options.onEnd?.();
    this.endedWith(code);
    for (const listener of this.exitListeners.splice(0)) listener(code);
  }

  /** Whether the container still runs: a process ended by its container's removal has no code of its own. */
  private async containerRunning(): Promise<boolean> {
    const info = await this.container.inspect().catch(() => undefined);
    return info?.State.Running === true && info.State.Status === 'running';
  }
}
