import Dockerode from 'dockerode';
import type { CheckResult } from '../src/self-check.js';
import { type EngineSettings, engineAddress, settingRefused, toSandboxError } from './docker-errors.js';

const BUILTIN_NETWORKS = new Set(['none', 'host', 'bridge', 'default']);

/**
 * What `bash` will need, asked of the engine now: it answers, the image exists, the network exists,
 * and the CPU limit fits the machine.
 */
export async function checkDocker(
  settings: Omit<EngineSettings, 'DATA_DIR'>,
  docker: Dockerode = new Dockerode(),
): Promise<CheckResult[]> {
  const image = settings.SANDBOX_IMAGE;
  const refusal = (error: unknown) =>
    (settingRefused(error, settings) ?? toSandboxError(error, { docker, image })).message;
  let info: { ServerVersion?: string; NCPU?: number };
  try {
    info = (await docker.info()) as typeof info;
  } catch (error) {
    return [{ ok: false, item: 'Docker engine', detail: toSandboxError(error, { docker, image }).message }];
  }
  // Without DOCKER_HOST the modem finds the socket itself; ask it where.
  const modem = docker.modem as { getSocketPath?: () => Promise<unknown> | undefined };
  const socket = await modem.getSocketPath?.();
  const where = typeof socket === 'string' ? socket : engineAddress(docker);
  const results: CheckResult[] = [
    { ok: true, item: 'Docker engine', detail: `${info.ServerVersion ?? 'version unknown'} at ${where}` },
  ];
  try {
    await docker.getImage(image).inspect();
    results.push({ ok: true, item: `sandbox image ${image}`, detail: 'present' });
  } catch (error) {
    results.push({ ok: false, item: `sandbox image ${image}`, detail: refusal(error) });
  }
  const network = settings.SANDBOX_NETWORK;
  if (!BUILTIN_NETWORKS.has(network) && !network.startsWith('container:')) {
    try {
      await docker.getNetwork(network).inspect();
      results.push({ ok: true, item: `sandbox network ${network}`, detail: 'exists' });
    } catch (error) {
      results.push({
        ok: false,
        item: `sandbox network ${network}`,
        detail: refusal(error),
      });
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
  return results;
}
