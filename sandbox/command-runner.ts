import type { Duplex } from 'node:stream';
import type Dockerode from 'dockerode';
import { SandboxError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { FrameDecoder } from './frame-decoder.js';
import { OutputBuffer } from './output-buffer.js';
import type { RunOptions, RunOutcome } from './run-exec.js';
import {
  encodeRequest,
  framePayload,
  RUNNER_PROTOCOL,
  RunnerDecoder,
  type RunnerFrame,
  type RunnerRequest,
} from './runner-protocol.js';
import { RUNNER_SOURCE, runnerLaunch } from './runner-source.js';
import { type QuotaStop, scanCap, type WorkspaceUsage } from './workspace-usage.js';

export interface RunnerOutcome extends RunOutcome {
  /** The runner's stream broke before the command ended; its processes may still be running. */
  readonly runnerLost: boolean;
  /** The runner received the command (it may have started); false with runnerLost: it never ran. */
  readonly accepted: boolean;
  /** The command's pid, which is also its session and process group id (when it started). */
  readonly pid: number | undefined;
  /** The memory cgroup's OOM-kill count when the command ended. */
  readonly oomKills: number | undefined;
  /** Why the runner could not start the command at all (e.g. no pid left); nothing ran. */
  readonly spawnError: string | undefined;
}

export interface RunnerStartOptions {
  readonly logger: Logger;
  /** How long the runner may take to say hello before the exec-API path is used instead. */
  readonly helloTimeoutMs: number;
  /** The Python source to run; the bundled sandbox/runner.py by default. */
  readonly source?: string | undefined;
  /** The digest of the runner baked into the image, if the probe found one. */
  readonly bakedDigest?: string | undefined;
}

interface Hello {
  readonly protocol: number;
  readonly pid: number;
  readonly oomKills: number;
}

interface End {
  readonly exit: number | null;
  readonly killed: boolean;
  readonly oomKills: number;
  readonly error: string | null;
  /** Bytes and entries in the workspace at the end, when asked. */
  readonly disk?: number;
  readonly files?: number;
  /** The watch stopped the command: the workspace went past this limit. */
  readonly quota?: QuotaStop;
}

interface Job {
  readonly output: OutputBuffer;
  accepted: boolean;
  pid: number | undefined;
  readonly done: (end: End | undefined) => void;
}

/** The workspace as the runner measured it at the end; a count at the runner's cap is a floor. */
function endUsage(end: End, fileLimit: number): WorkspaceUsage | undefined {
  if (end.disk === undefined) return undefined;
  const files = end.files ?? 0;
  return { bytes: end.disk, files, complete: files < scanCap(fileLimit) };
}

/** The runner is gone (or never came up): the command was not sent, so it may run elsewhere. */
export class RunnerUnavailable extends SandboxError {}

/** How long a killed command may take to be reported before the runner is given up on. */
const KILL_GRACE_MS = 5_000;
const STDERR_KEEP = 2_000;

/**
 * The bridge's side of one container's command runner (sandbox/runner.py): a single long-lived
 * exec whose stdin carries commands and whose stdout carries their output, multiplexed by id so
 * overlapping calls are safe. Saves the container runtime's per-exec cost on every command.
 */
export class CommandRunner {
  private readonly jobs = new Map<number, Job>();
  private readonly decoder: FrameDecoder;
  private readonly replies: RunnerDecoder;
  private nextId = 1;
  private open = true;
  private stderr = '';
  private hello: ((hello: Hello | undefined) => void) | undefined;

  private constructor(
    private readonly stream: Duplex,
    private readonly log: Logger,
  ) {
    this.replies = new RunnerDecoder((frame) => this.onFrame(frame));
    this.decoder = new FrameDecoder((payload, kind) => {
      if (kind === 2) {
        this.stderr = (this.stderr + payload.toString('utf8')).slice(-STDERR_KEEP);
        return;
      }
      try {
        this.replies.write(payload);
      } catch (error) {
        this.log.warn({ err: error }, 'sandbox command runner sent a malformed reply; closing it');
        this.close();
      }
    });
    stream.on('data', (chunk: Buffer) => this.decoder.write(chunk));
    stream.once('end', () => this.onClosed());
    stream.once('close', () => this.onClosed());
    stream.once('error', () => this.onClosed());
    // Between commands the open stream must not keep the process alive; a running
    // command's timer does that while it runs.
    (stream as Partial<{ unref(): void }>).unref?.();
  }

  /** Starts a runner in the container and waits for its hello; throws RunnerUnavailable when it does not come. */
  static async start(container: Dockerode.Container, options: RunnerStartOptions): Promise<CommandRunner> {
    const launch = runnerLaunch(options.source ?? RUNNER_SOURCE, options.bakedDigest);
    const exec = await container.exec({
      Cmd: launch.cmd,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = (await exec.start({ hijack: true, stdin: true, Detach: false, Tty: false })) as Duplex;
    const runner = new CommandRunner(stream, options.logger);
    if (launch.preamble) stream.write(launch.preamble);
    let timer: NodeJS.Timeout | undefined;
    const hello = await new Promise<Hello | undefined>((resolve) => {
      runner.hello = resolve;
      timer = setTimeout(() => resolve(undefined), options.helloTimeoutMs);
      if (!runner.open) resolve(undefined);
    });
    clearTimeout(timer);
    runner.hello = undefined;
    if (!hello || hello.protocol !== RUNNER_PROTOCOL) {
      const why = hello ? `protocol ${hello.protocol}, expected ${RUNNER_PROTOCOL}` : 'no hello';
      const stderr = runner.stderr.trim();
      runner.close();
      throw new RunnerUnavailable(`the command runner did not start (${why})${stderr ? `: ${stderr}` : ''}`);
    }
    return runner;
  }

  get alive(): boolean {
    return this.open;
  }

  /** Runs one command; throws RunnerUnavailable (nothing sent) when the runner is already gone. */
  async run(command: string, options: RunOptions): Promise<RunnerOutcome> {
    if (!this.open) throw new RunnerUnavailable('the command runner has stopped');
    const id = this.nextId;
    this.nextId += 1;
    const output = new OutputBuffer();
    let stopReason: 'timeout' | 'abort' | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let job: Job | undefined;
    const ended = new Promise<End | undefined>((resolve) => {
      job = { output, accepted: false, pid: undefined, done: resolve };
    });
    this.jobs.set(id, job as Job);
    this.send({
      op: 'run',
      id,
      command,
      ...(options.fsize !== undefined ? { fsize: Math.max(0, Math.floor(options.fsize)) } : {}),
      ...(options.measureDisk ? { disk: true } : {}),
      ...(options.quota ? { quota: options.quota } : {}),
    });

    const stop = (reason: 'timeout' | 'abort'): void => {
      if (stopReason) return;
      stopReason = reason;
      this.send({ op: 'kill', id });
      // A runner that cannot report the kill is wedged: dropping it ends this command (runnerLost)
      // and the caller kills what is left from outside.
      graceTimer = setTimeout(() => this.close(), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    const onAbort = (): void => stop('abort');
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    let end: End | undefined;
    try {
      end = await ended;
    } finally {
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      options.signal?.removeEventListener('abort', onAbort);
      this.jobs.delete(id);
    }
    const { pid, accepted } = job as Job;
    return {
      output: output.text(),
      exitCode: stopReason || !end ? null : end.exit,
      timedOut: stopReason === 'timeout',
      aborted: stopReason === 'abort',
      containerKilled: false,
      runnerLost: !end,
      accepted,
      pid,
      oomKills: end?.oomKills,
      spawnError: end?.error ?? undefined,
      usage: end ? endUsage(end, options.quota?.files ?? 0) : undefined,
      quotaStop: end?.quota,
    };
  }

  /** Drops the stream; the runner sees end of input, kills what it still runs and exits. */
  close(): void {
    this.stream.destroy();
    this.onClosed();
  }

  private send(request: RunnerRequest): void {
    if (this.open) this.stream.write(encodeRequest(request));
  }

  private onFrame(frame: RunnerFrame): void {
    if (frame.kind === 'hello') {
      this.hello?.(framePayload<Hello>(frame));
      return;
    }
    const job = this.jobs.get(frame.id);
    if (!job) return;
    if (frame.kind === 'output') job.output.write(frame.payload);
    else if (frame.kind === 'gap') job.output.skip();
    else if (frame.kind === 'accepted') job.accepted = true;
    else if (frame.kind === 'started') job.pid = framePayload<{ pid: number }>(frame).pid;
    else if (frame.kind === 'end') job.done(framePayload<End>(frame));
  }

  private onClosed(): void {
    if (!this.open) return;
    this.open = false;
    if (this.stderr.trim()) this.log.warn({ stderr: this.stderr.trim() }, 'sandbox command runner stopped');
    this.hello?.(undefined);
    for (const job of this.jobs.values()) job.done(undefined);
  }
}
