import type Dockerode from 'dockerode';
import type { RunnerOutcome } from './command-runner.js';
import { killRunnerSession, parseOomKills, probeContainer } from './container-probe.js';
import type { RunOutcome } from './run-exec.js';

/** What one command came back with, by either path (runner or one exec). */
export type Outcome = RunOutcome & Partial<Pick<RunnerOutcome, 'runnerLost' | 'oomKills' | 'spawnError' | 'pid'>>;

/** The container a command ran in, as far as explaining its end needs. */
export interface KilledIn {
  readonly id: string;
  readonly container: Dockerode.Container;
  /** The memory cgroup's OOM-kill count last seen; raised here when a new OOM kill is found. */
  oomKills: number;
}

/** Looks the channel's container up by name (undefined when absent) and removes it. */
export interface ContainerAccess {
  inspect(): Promise<Dockerode.ContainerInspectInfo | undefined>;
  remove(): Promise<void>;
}

/**
 * The runner died mid-command (killed by the command, by the OOM killer, or with its
 * container): what the command left running is killed from outside, or the container is
 * removed when that fails or the command's pid never arrived. The next command starts a fresh
 * runner (or container; the workspace is a host folder and stays).
 */
export async function cleanUpAfterRunnerLoss(
  live: KilledIn,
  access: ContainerAccess,
  outcome: Outcome,
): Promise<Outcome> {
  const info = await access.inspect().catch(() => undefined);
  if (!info?.State.Running || info.Id !== live.id) return outcome;
  if (outcome.pid !== undefined && (await killRunnerSession(live.container, outcome.pid))) return outcome;
  await access.remove().catch(() => undefined);
  return { ...outcome, containerKilled: true };
}

/**
 * Why a command ended with SIGKILL (or without an exit code) when we did not stop it
 * ourselves. `stopped` says the container is gone, so the caller forgets it.
 */
export async function explainKill(
  live: KilledIn,
  access: ContainerAccess,
  outcome: Outcome,
  memoryLimit: string,
): Promise<{ note: string; stopped: boolean; outOfMemory: boolean }> {
  // The runner reports the OOM count itself; otherwise (exec path, lost runner) look inside.
  let oomKills = outcome.oomKills;
  if (oomKills === undefined) {
    const gone = await containerStopped(live, access);
    if (gone) return { ...gone, stopped: true };
    const probe = await probeContainer(live.container).catch(() => undefined);
    oomKills = probe ? parseOomKills(probe.output) : live.oomKills;
  }
  if (oomKills > live.oomKills) {
    live.oomKills = oomKills;
    return {
      note: `[killed: out of memory (the sandbox's limit is ${memoryLimit})]`,
      stopped: false,
      outOfMemory: true,
    };
  }
  if (outcome.runnerLost) {
    return {
      note: "[the sandbox's command runner was killed during this command; what the command started was stopped]",
      stopped: false,
      outOfMemory: false,
    };
  }
  return { note: '[killed by SIGKILL]', stopped: false, outOfMemory: false };
}

/** The note when the command's container is no longer running (it is recreated for the next command). */
export async function containerStopped(
  live: KilledIn,
  access: ContainerAccess,
): Promise<{ note: string; outOfMemory: boolean } | undefined> {
  const info = await access.inspect().catch(() => undefined);
  if (info?.State.Running && info.Id === live.id) return undefined;
  const outOfMemory = info?.State.OOMKilled === true;
  return {
    note: `[the sandbox container stopped${outOfMemory ? ' (out of memory)' : ''}; a fresh one is created for the next command, files in /workspace are kept]`,
    outOfMemory,
  };
}

export function appendNote(output: string, note: string): string {
  return `${output}${output && !output.endsWith('\n') ? '\n' : ''}${note}`;
}
