import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type Dockerode from 'dockerode';
import { FrameDecoder } from './frame-decoder.js';
import { OutputBuffer } from './output-buffer.js';
import type { QuotaStop, WorkspaceQuota, WorkspaceUsage } from './workspace-usage.js';

/** What a container offers for running commands, learnt once per container by a probe. */
export interface ExecTarget {
  readonly container: Dockerode.Container;
  /** `bash` when the image has it; `sh` otherwise. */
  readonly shell: 'bash' | 'sh';
  /** Whether `setsid -w` exists: it gives each command its own session, which is what a timeout kills. */
  readonly setsid: boolean;
}

export interface RunOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** How long to wait for the output to end after killing the command before killing the container. */
  readonly killGraceMs?: number;
  /** No file the command writes may grow past this many bytes (RLIMIT_FSIZE, which it cannot raise). */
  readonly fsize?: number | undefined;
  /** Measure the workspace when the command ends (the runner does; this path leaves it to the caller). */
  readonly measureDisk?: boolean | undefined;
  /** Stop the command when it takes the workspace past these limits (the runner watches; this path leaves it to the caller). */
  readonly quota?: WorkspaceQuota | undefined;
}

export interface RunOutcome {
  readonly output: string;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /** The command could not be stopped from inside, so the whole container was killed (it is recreated later). */
  readonly containerKilled: boolean;
  /** The workspace when the command ended, when measured. */
  readonly usage?: WorkspaceUsage | undefined;
  /** The command was stopped because the workspace went past this limit. */
  readonly quotaStop?: QuotaStop | undefined;
}

/**
 * Runs in the container. $0 = pid file, $1 = shell, $2 = command. The command runs with stderr
 * merged into stdout (so the two interleave as written) in its own process group (bash's `set -m`),
 * and the pid file records the wrapper's session and the command's group for the killer.
 * When the command ends, whatever it left running in its group is killed: Docker stops relaying
 * output 2 s after the command exits anyway, and leftovers such as a fork bomb's would otherwise
 * hold every pid and block the channel's next command. `setsid` lets a deliberate service outlive it.
 * dash cannot do job control without a terminal, so with plain sh the command shares the
 * wrapper's group and only a timeout cleans up.
 */
function wrapper(shell: 'bash' | 'sh', fsize: number | undefined): string {
  // bash counts ulimit -f in KiB, dash in 512-byte blocks; set before the command, it cannot raise it.
  const blocks = fsize === undefined ? undefined : Math.floor(Math.max(0, fsize) / (shell === 'bash' ? 1024 : 512));
  return [
    'exec 2>/dev/null',
    shell === 'bash' ? 'set -m' : ':',
    // The cap is the command's alone: the wrapper still writes its pid file when no room is left.
    blocks === undefined
      ? '"$1" -c "$2" 2>&1 & c=$!'
      : `(ulimit -f ${blocks} || exit 126; exec "$1" -c "$2") 2>&1 & c=$!`,
    'printf "%s %s\\n" "$$" "$c" > "$0"',
    'wait "$c"; s=$?',
    shell === 'bash' ? 'kill -9 -"$c"' : ':',
    'rm -f "$0"; exit $s',
  ].join('\n');
}

/**
 * Kills the command's process group, then the wrapper's whole session. Builtins first (read,
 * kill) so it still works when a fork bomb has used up nearly every pid; pkill catches processes
 * that left the group but not the session. `kill -9 -PGID` because dash has no `kill --`.
 */
const KILLER =
  'read -r p c < "$0" || exit 3; kill -9 "-$c" 2>/dev/null; kill -9 "-$p" 2>/dev/null; ' +
  'command -v pkill >/dev/null 2>&1 && pkill -9 -s "$p"; rm -f "$0"; exit 0';

// Bounded, but not tight: when a fork bomb holds every pid the exec fails at once rather than
// hangs, so the bound only matters on a busy engine, where giving up would discard a healthy container.
const KILLER_TIMEOUT_MS = 20_000;

/**
 * Runs one command through the Docker exec API with bounded output memory, a time limit and
 * abort. On expiry or abort the command's processes are killed and the container stays usable;
 * if that fails (e.g. the pids limit leaves no room even for the killer) the container is killed.
 * Errors creating or starting the exec are thrown for the caller to classify.
 */
export async function runExec(target: ExecTarget, command: string, options: RunOptions): Promise<RunOutcome> {
  const pidFile = `/tmp/.roundtable-exec-${randomUUID()}.pid`;
  const argv = [target.shell, '-c', wrapper(target.shell, options.fsize), pidFile, target.shell, command];
  const exec = await target.container.exec({
    // setsid's own complaint about a killed child goes to /dev/null; the command's stderr is merged into stdout.
    Cmd: target.setsid ? ['sh', '-c', 'exec setsid -w "$@" 2>/dev/null', 'sh', ...argv] : argv,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: false, Detach: false, Tty: false })) as Readable;

  const output = new OutputBuffer();
  const decoder = new FrameDecoder((payload) => output.write(payload));
  let stopReason: 'timeout' | 'abort' | undefined;
  let containerKilled = false;
  let finished = false;

  const ended = new Promise<void>((resolve) => {
    stream.on('data', (chunk: Buffer) => decoder.write(chunk));
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });

  // Removing (not just killing) the container means the next command cannot race a dying one:
  // it finds no container and creates a fresh one; the workspace is a host folder and stays.
  const killContainer = async (): Promise<void> => {
    containerKilled = true;
    await target.container.remove({ force: true }).catch(() => undefined);
  };

  let graceTimer: NodeJS.Timeout | undefined;
  const stop = (reason: 'timeout' | 'abort'): void => {
    if (stopReason) return;
    stopReason = reason;
    void (async () => {
      const killed = target.setsid && (await killSession(target.container, pidFile));
      if (finished) return;
      if (!killed) await killContainer();
      if (finished) return;
      // Something still holds the output open (e.g. a process that left the session): give up on it.
      graceTimer = setTimeout(() => {
        void killContainer().finally(() => stream.destroy());
      }, options.killGraceMs ?? 2_000);
    })();
  };

  const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
  const onAbort = (): void => stop('abort');
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    await ended;
  } finally {
    finished = true;
    clearTimeout(timer);
    if (graceTimer) clearTimeout(graceTimer);
    options.signal?.removeEventListener('abort', onAbort);
    stream.destroy();
  }

  let exitCode: number | null = null;
  if (!stopReason) {
    const info = await exec.inspect().catch(() => undefined);
    exitCode = info?.ExitCode ?? null;
  }
  return {
    output: output.text(),
    exitCode,
    timedOut: stopReason === 'timeout',
    aborted: stopReason === 'abort',
    containerKilled,
  };
}

/**
 * Runs the killer in a second exec; true when it reports the session killed. A second try covers
 * a limit so short that the command had not yet written its pid file.
 */
async function killSession(container: Dockerode.Container, pidFile: string): Promise<boolean> {
  if (await killSessionOnce(container, pidFile)) return true;
  await new Promise((resolve) => setTimeout(resolve, 100));
  return killSessionOnce(container, pidFile);
}

async function killSessionOnce(container: Dockerode.Container, pidFile: string): Promise<boolean> {
  const result = await execSimple(container, ['sh', '-c', KILLER, pidFile], KILLER_TIMEOUT_MS).catch(() => undefined);
  return result?.exitCode === 0;
}

/**
 * Runs a short helper command (probe, killer) and collects its output; resolves with a null
 * exit code when it does not finish within `timeoutMs`.
 */
export async function execSimple(
  container: Dockerode.Container,
  cmd: string[],
  timeoutMs: number,
): Promise<{ output: string; exitCode: number | null }> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = (await exec.start({ hijack: true, stdin: false, Detach: false, Tty: false })) as Readable;
  const output = new OutputBuffer();
  const decoder = new FrameDecoder((payload) => output.write(payload));
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    new Promise<boolean>((resolve) => {
      stream.on('data', (chunk: Buffer) => decoder.write(chunk));
      stream.once('end', () => resolve(true));
      stream.once('close', () => resolve(true));
      stream.once('error', () => resolve(true));
    }),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  stream.destroy();
  if (!finished) return { output: output.text(), exitCode: null };
  const info = await exec.inspect();
  return { output: output.text(), exitCode: info.ExitCode };
}
