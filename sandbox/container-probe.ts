import type Dockerode from 'dockerode';
import { execSimple } from './run-exec.js';
import { BAKED_RUNNER_PATH } from './runner-source.js';

/**
 * How long a helper exec (probe, runner start, killer) may take. Generous: on a busy machine
 * (another container's fork bomb, a CI run) starting an exec alone can take seconds.
 */
export const HELPER_TIMEOUT_MS = 30_000;

/**
 * Learns what the image offers (bash? setsid? which baked command runner?) and the memory
 * cgroup's OOM-kill count (cgroup v2 memory.events or v1 memory.oom_control).
 */
const PROBE =
  'printf "bash=%s\\nsetsid=%s\\n" "$(command -v bash)" "$(command -v setsid)"; ' +
  `[ -r ${BAKED_RUNNER_PATH} ] && printf "runner=%s\\n" "$(sha256sum < ${BAKED_RUNNER_PATH})"; ` +
  'cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null; exit 0';

export interface Probe {
  readonly output: string;
  readonly exitCode: number | null;
}

/** Runs the probe; `exitCode` is null when it did not finish within `timeoutMs`. */
export function probeContainer(container: Dockerode.Container, timeoutMs = HELPER_TIMEOUT_MS): Promise<Probe> {
  return execSimple(container, ['sh', '-c', PROBE], timeoutMs);
}

/** The sha256 of the image's baked runner, when it has one. */
export function parseRunnerDigest(probeOutput: string): string | undefined {
  return /^runner=([0-9a-f]{64})\b/m.exec(probeOutput)?.[1];
}

export function parseOomKills(probeOutput: string): number {
  const match = /^oom_kill (\d+)$/m.exec(probeOutput);
  return match ? Number(match[1]) : 0;
}

/**
 * Kills, from outside, the session a command runner started (group first, then stragglers),
 * for when the runner died mid-command. Builtins first, as a fork bomb may leave few pids.
 * True when it ran to the end.
 */
export async function killRunnerSession(container: Dockerode.Container, pid: number): Promise<boolean> {
  const script =
    'kill -9 "-$0" 2>/dev/null; command -v pkill >/dev/null 2>&1 && pkill -9 -s "$0"; ' +
    'command -v pkill >/dev/null 2>&1 && pkill -9 -g "$0"; exit 0';
  const result = await execSimple(container, ['sh', '-c', script, String(pid)], HELPER_TIMEOUT_MS).catch(
    () => undefined,
  );
  return result?.exitCode === 0;
}
