import path from 'node:path';
import type Dockerode from 'dockerode';
import type { Settings } from '../src/config/index.js';
import type { CheckResult } from '../src/self-check.js';
import { HELPER_TIMEOUT_MS } from './container-probe.js';
import { type TrialOutcome, tryContainer } from './container-trial.js';
import { Deadline, DeadlinePassed } from './deadline.js';
import { type EngineSettings, engineAddress, SAME_PATH_FIX, settingRefused, toSandboxError } from './docker-errors.js';
import { engineClient } from './engine-client.js';

const BUILTIN_NETWORKS = new Set(['none', 'host', 'bridge', 'default']);

export interface DockerCheckOptions {
  /** Bound of the whole check, the throw-away container included (default 30 s). */
  readonly timeoutMs?: number;
  /** Ends the check early (the sandbox shutting down); what it started is removed. */
  readonly signal?: AbortSignal;
}

/** The settings a check reads; how the engine is reached and where workspaces live default to the local socket and bind. */
export type CheckedSettings = EngineSettings &
  Partial<Pick<Settings, 'DOCKER_HOST' | 'DOCKER_TLS_VERIFY' | 'DOCKER_CERT_PATH' | 'SANDBOX_WORKSPACES'>>;

const seconds = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

/**
 * What `bash` will need, asked of the engine now: it answers, the image exists, the network exists,
 * the CPU limit fits the machine, and a throw-away container with the channels' exact settings
 * starts and sees the bridge's workspace folder. `settings.DATA_DIR` must be resolved already.
 * Every failing line names the variable to change.
 */
export async function checkDocker(
  settings: CheckedSettings,
  docker: Dockerode = engineClient({ DOCKER_TLS_VERIFY: false, ...settings }),
  options: DockerCheckOptions = {},
): Promise<CheckResult[]> {
  const timeoutMs = options.timeoutMs ?? HELPER_TIMEOUT_MS;
  const deadline = new Deadline(timeoutMs, options.signal);
  const image = settings.SANDBOX_IMAGE;
  const results: CheckResult[] = [];
  const refusal = (error: unknown) =>
    (settingRefused(error, settings) ?? toSandboxError(error, { docker, image })).message;
  try {
    let info: { ServerVersion?: string; NCPU?: number };
    try {
      info = (await deadline.race(docker.info())) as typeof info;
    } catch (error) {
      if (error instanceof DeadlinePassed) throw error;
      return [{ ok: false, item: 'Docker engine', detail: toSandboxError(error, { docker, image }).message }];
    }
    // Without DOCKER_HOST the modem finds the socket itself; ask it where.
    const modem = docker.modem as { getSocketPath?: () => Promise<unknown> | undefined };
    const socket = await modem.getSocketPath?.();
    const where = typeof socket === 'string' ? socket : engineAddress(docker);
    results.push({ ok: true, item: 'Docker engine', detail: `${info.ServerVersion ?? 'version unknown'} at ${where}` });
    try {
      await deadline.race(docker.getImage(image).inspect());
      results.push({ ok: true, item: `sandbox image ${image}`, detail: 'present' });
    } catch (error) {
      if (error instanceof DeadlinePassed) throw error;
      results.push({ ok: false, item: `sandbox image ${image}`, detail: refusal(error) });
    }
    const network = settings.SANDBOX_NETWORK;
    if (!BUILTIN_NETWORKS.has(network) && !network.startsWith('container:')) {
      try {
        await deadline.race(docker.getNetwork(network).inspect());
        results.push({ ok: true, item: `sandbox network ${network}`, detail: 'exists' });
      } catch (error) {
        if (error instanceof DeadlinePassed) throw error;
        results.push({ ok: false, item: `sandbox network ${network}`, detail: refusal(error) });
      }
    }
    const cpus = info.NCPU ?? Number.POSITIVE_INFINITY;
    results.push(
      settings.SANDBOX_CPUS > cpus
        ? {
            ok: false,
            item: 'sandbox limits',
            detail: `SANDBOX_CPUS=${settings.SANDBOX_CPUS}: the engine has ${cpus} CPU${cpus === 1 ? '' : 's'} (set SANDBOX_CPUS to ${cpus} or less)`,
          }
        : {
            ok: true,
            item: 'sandbox limits',
            detail: `memory ${settings.SANDBOX_MEMORY}, ${settings.SANDBOX_CPUS} CPU${Number.isFinite(cpus) ? ` of ${cpus}` : ''}, ${settings.SANDBOX_PIDS} processes`,
          },
    );
    // A container cannot start while any of the above is wrong: those lines say why already.
    if (results.every((result) => result.ok)) {
      const trial = await tryContainer({ docker, settings, timeoutMs: deadline.remaining(), signal: options.signal });
      results.push(trialLine(trial, settings, { docker, image }, timeoutMs));
    }
  } catch (error) {
    if (!(error instanceof DeadlinePassed)) throw error;
    results.push({ ok: false, item: 'Docker engine', detail: tooSlow(timeoutMs) });
  } finally {
    deadline.clear();
  }
  return results;
}

function tooSlow(ms: number): string {
  return `no answer within ${seconds(ms)} (the machine or the Docker engine is overloaded); run the check again`;
}

function trialLine(
  trial: TrialOutcome,
  settings: CheckedSettings,
  context: Parameters<typeof toSandboxError>[1],
  timeoutMs: number,
): CheckResult {
  const item = 'sandbox container';
  if (settings.SANDBOX_WORKSPACES === 'volume' && (trial.kind === 'passed' || trial.kind === 'hidden')) {
    return trial.kind === 'passed'
      ? {
          ok: true,
          item,
          detail: `a throw-away one started with these settings and read a file put in ${trial.folder}`,
        }
      : {
          ok: false,
          item,
          detail: `SANDBOX_WORKSPACES=volume: a file put in ${trial.folder} through the engine did not reach the container (${trial.seen})`,
        };
  }
  switch (trial.kind) {
    case 'passed':
      return {
        ok: true,
        item,
        detail: `a throw-away one started with these settings and read a file the bridge wrote in ${path.dirname(trial.folder)}`,
      };
    case 'hidden':
      return {
        ok: false,
        item,
        detail:
          `DATA_DIR=${settings.DATA_DIR}: a sandbox container does not see the files the bridge writes there ` +
          `(${trial.seen}): the Docker engine resolves bind mounts on its own host, where ` +
          `${settings.DATA_DIR} is another folder; ${SAME_PATH_FIX}`,
      };
    case 'refused':
      return { ok: false, item, detail: trial.error.message };
    case 'timed out':
      return { ok: false, item, detail: tooSlow(timeoutMs) };
    case 'failed':
      return { ok: false, item, detail: toSandboxError(trial.error, context).message };
  }
}
