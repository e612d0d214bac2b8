/**
 * Which container serves each channel: the one this process knows, one a previous process left running for this
 * data folder (adopted), or a new one — created from the hardened spec, started and probed before its first
 * command. Idle containers are removed after SANDBOX_IDLE_MINUTES; the workspace (a host folder or a volume) stays.
 */
import type Dockerode from 'dockerode';
import type { Settings } from '../src/config/index.js';
import { SandboxError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { containerName } from './channel-key.js';
import { HELPER_TIMEOUT_MS, parseOomKills, parseRunnerDigest, probeContainer } from './container-probe.js';
import { containerSpec, LABEL_CHANNEL, LABEL_PROJECT, LABEL_SCOPE, PROJECT } from './container-spec.js';
import { type EngineSettings, engineMessage, hasStatus, settingRefused } from './docker-errors.js';
import type { ContainerAccess } from './kill-report.js';
import type { ExecTarget } from './run-exec.js';
import { RunnerSlot } from './runner-slot.js';
import type { WorkspaceStorage } from './workspace-storage.js';

/** A container this process uses, with what the probe learnt about it. */
export interface LiveContainer extends ExecTarget {
  readonly id: string;
  readonly startedAt: number;
  /** The memory cgroup's OOM-kill count last seen, to tell an OOM kill from any other SIGKILL. */
  oomKills: number;
  /** The container's command runner (the fast path); none when it is switched off. */
  readonly runner: RunnerSlot | undefined;
}

/** A long-lived process in a channel's container (sandbox/docker-process.ts). */
export interface OpenProcess {
  /** Its container is being removed: it ends with it. */
  containerGone(): void;
  kill(): Promise<void>;
}

/** One channel's container, as far as this process knows it. */
export interface ChannelState {
  readonly key: string;
  readonly name: string;
  live: LiveContainer | undefined;
  preparing: Promise<LiveContainer> | undefined;
  lastCommand: { readonly text: string; readonly at: number } | undefined;
  inFlight: number;
  idleTimer: NodeJS.Timeout | undefined;
  /** The processes started in its container and not ended yet. */
  readonly processes: Set<OpenProcess>;
}

/**
 * What Docker answers when the runtime cannot start an exec's process at all: no pid left, or a
 * container whose processes all died (out of memory, say) that the engine has not yet seen stop.
 */
export const EXEC_FAILED_EXIT = 126;
export const EXEC_FAILED = /^(?:OCI runtime exec failed|cannot exec in a stopped state)/;

const duration = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

export interface ChannelContainersOptions {
  readonly docker: Dockerode;
  readonly settings: Settings;
  readonly log: Logger;
  /** The absolute data folder: it scopes container names and labels. */
  readonly dataDir: string;
  /** Where the channels' workspaces live (host folders or volumes). */
  readonly workspaces: WorkspaceStorage;
  /** Whether each container gets a command runner. */
  readonly runner: boolean;
  /** The runner's Python source to inject instead of sandbox/runner.py. */
  readonly runnerSource: string | undefined;
  /** How long a new container's start-up probe may take. */
  readonly probeTimeoutMs: number;
}

export class ChannelContainers {
  private readonly channels = new Map<string, ChannelState>();
  private adoption: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: ChannelContainersOptions) {}

  private get settings(): Settings {
    return this.options.settings;
  }

  private get log(): Logger {
    return this.options.log;
  }

  /** The channel's state, made on first use. */
  channel(key: string): ChannelState {
    let state = this.channels.get(key);
    if (!state) {
      state = {
        key,
        name: containerName(this.options.dataDir, key),
        live: undefined,
        preparing: undefined,
        lastCommand: undefined,
        inFlight: 0,
        idleTimer: undefined,
        processes: new Set(),
      };
      this.channels.set(key, state);
    }
    return state;
  }

  /** The channel's running container: the one we know, an existing one (adopted), or a new one. */
  async ensure(state: ChannelState): Promise<LiveContainer> {
    if (state.live) return state.live;
    state.preparing ??= this.prepare(state).finally(() => {
      state.preparing = undefined;
    });
    return state.preparing;
  }

  /** Drops what we know about the channel's container, and its runner with it. */
  forget(state: ChannelState): void {
    for (const open of state.processes) open.containerGone();
    state.live?.runner?.close();
    state.live = undefined;
  }

  /**
   * Adopts, once, the containers a previous bridge process left running for this data folder,
   * so idle reaping and shutdown cover them too; stopped leftovers are removed.
   */
  adoptAll(): Promise<void> {
    this.adoption ??= (async () => {
      const found = await this.options.docker.listContainers({
        all: true,
        filters: { label: [`${LABEL_PROJECT}=${PROJECT}`, `${LABEL_SCOPE}=${this.options.dataDir}`] },
      });
      for (const summary of found) {
        const key = summary.Labels[LABEL_CHANNEL];
        if (key === undefined) continue;
        if (summary.State !== 'running') {
          await this.remove(summary.Id).catch(() => undefined);
          continue;
        }
        this.armIdle(this.channel(key));
      }
    })().catch((error: unknown) => {
      this.adoption = undefined;
      throw error;
    });
    return this.adoption;
  }

  /** After a command (or an adoption): the container is removed if no command comes for SANDBOX_IDLE_MINUTES. */
  armIdle(state: ChannelState): void {
    this.clearIdle(state);
    const minutes = this.settings.SANDBOX_IDLE_MINUTES;
    if (this.closed || minutes <= 0 || state.inFlight > 0) return;
    state.idleTimer = setTimeout(() => void this.reap(state), minutes * 60_000);
    // An idle timer must never keep the process alive.
    state.idleTimer.unref();
  }

  clearIdle(state: ChannelState): void {
    if (state.idleTimer) clearTimeout(state.idleTimer);
    state.idleTimer = undefined;
  }

  /** Looking the channel's container up and removing it, for what explains a command's end. */
  access(state: ChannelState): ContainerAccess {
    return { inspect: () => this.inspect(state.name), remove: () => this.remove(state.name) };
  }

  async inspect(name: string): Promise<Dockerode.ContainerInspectInfo | undefined> {
    try {
      return await this.options.docker.getContainer(name).inspect();
    } catch (error) {
      if (hasStatus(error, 404)) return undefined;
      throw error;
    }
  }

  async remove(nameOrId: string): Promise<void> {
    try {
      await this.options.docker.getContainer(nameOrId).remove({ force: true });
    } catch (error) {
      // 404: already gone; 409: a removal is under way, and the name is free once it is done.
      if (hasStatus(error, 409)) await this.removed(nameOrId);
      else if (!hasStatus(error, 404)) throw error;
    }
  }

  /** Waits (bounded) until a container being removed is gone, so a new one can take its name. */
  private async removed(nameOrId: string): Promise<void> {
    const deadline = Date.now() + HELPER_TIMEOUT_MS;
    while (Date.now() < deadline && (await this.inspect(nameOrId).catch(() => undefined))) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops every runner and idle timer; removes the containers unless SANDBOX_KEEP_ON_EXIT. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const state of this.channels.values()) {
      this.clearIdle(state);
      state.live?.runner?.close();
    }
    // A kept container keeps no process of this bridge's: it would outlive the bridge that talks to it.
    const processes = [...this.channels.values()].flatMap((state) => [...state.processes]);
    if (this.settings.SANDBOX_KEEP_ON_EXIT) {
      await Promise.all(processes.map((open) => open.kill()));
      return;
    }
    for (const open of processes) open.containerGone();
    const known = [...this.channels.values()].filter((state) => state.live || state.preparing);
    await Promise.all(
      known.map(async (state) => {
        await state.preparing?.catch(() => undefined);
        await this.remove(state.name).catch((error: unknown) => {
          this.log.warn({ channel: state.key, reason: engineMessage(error) }, 'could not remove sandbox container');
        });
        this.forget(state);
      }),
    );
  }

  private async prepare(state: ChannelState, retry = true): Promise<LiveContainer> {
    let info = await this.inspect(state.name);
    // A container the engine is removing (after an out-of-memory kill, or a removal of ours) may still say it runs:
    // its removal is waited out, and a fresh one takes its name.
    if (info && (!info.State.Running || info.State.Status === 'removing' || info.State.Status === 'dead')) {
      this.log.info({ channel: state.key, status: info.State.Status }, 'sandbox container stopped; recreating it');
      await this.remove(state.name);
      info = undefined;
    }
    if (info) {
      this.log.info({ channel: state.key, container: state.name }, 'adopted existing sandbox container');
      return this.probe(state, info, retry);
    }
    const created = await this.create(state);
    try {
      return await this.probe(state, created, retry);
    } catch (error) {
      // A container this call made but could not put to use is not left behind (nor for close() to miss).
      await this.remove(created.Id).catch(() => undefined);
      throw error;
    }
  }

  /** Learns what the container offers; a failed probe is retried once on a fresh container. */
  private async probe(
    state: ChannelState,
    info: Dockerode.ContainerInspectInfo,
    retry: boolean,
  ): Promise<LiveContainer> {
    const container = this.options.docker.getContainer(info.Id);
    const probe = await probeContainer(container, this.options.probeTimeoutMs).catch((error: unknown) => {
      // It died between inspect and probe (killed by hand, OOM, being removed): start over once with a fresh one.
      if (
        retry &&
        (hasStatus(error, 404, 409) || (hasStatus(error, 500) && /not running/i.test(engineMessage(error))))
      ) {
        return undefined;
      }
      throw error;
    });
    if (!probe || (retry && probe.exitCode === EXEC_FAILED_EXIT && EXEC_FAILED.test(probe.output))) {
      await this.remove(state.name);
      return this.prepare(state, false);
    }
    if (probe.exitCode === null) {
      // Slow is not broken: say so, rather than blame the image.
      throw new SandboxError(
        `the sandbox container did not answer its start-up check within ${duration(this.options.probeTimeoutMs)} ` +
          '(the machine or the Docker engine is overloaded); try the command again',
      );
    }
    if (probe.exitCode !== 0) {
      throw new SandboxError(
        `sandbox image ${this.settings.SANDBOX_IMAGE} cannot run sh: rebuild it with npm run sandbox:build`,
      );
    }
    const live: LiveContainer = {
      id: info.Id,
      container,
      shell: /^bash=\S/m.test(probe.output) ? 'bash' : 'sh',
      setsid: /^setsid=\S/m.test(probe.output),
      startedAt: Date.parse(info.State.StartedAt),
      oomKills: parseOomKills(probe.output),
      runner: this.options.runner
        ? new RunnerSlot(container, {
            logger: this.log.child({ channel: state.key }),
            source: this.options.runnerSource,
            bakedDigest: parseRunnerDigest(probe.output),
          })
        : undefined,
    };
    if (this.closed) {
      await this.remove(state.name).catch(() => undefined);
      throw new SandboxError('the sandbox is shut down');
    }
    state.live = live;
    return live;
  }

  private async create(state: ChannelState): Promise<Dockerode.ContainerInspectInfo> {
    const { workspaces } = this.options;
    const seeded = await workspaces.prepare(state.key);
    const spec = containerSpec({
      name: state.name,
      channelKey: state.key,
      scope: this.options.dataDir,
      ...workspaces.mount(state.key),
      settings: this.settings,
    });
    let container: Dockerode.Container;
    try {
      container = await this.options.docker.createContainer(spec);
    } catch (error) {
      throw settingRefused(error, this.engineSettings()) ?? error;
    }
    try {
      await workspaces.seed(state.key, container);
    } catch (error) {
      // Without its template the workspace is not what a new one should be: the next try makes it again.
      await this.remove(container.id).catch(() => undefined);
      await workspaces.wipe(state.key).catch(() => undefined);
      throw error;
    }
    try {
      await container.start();
    } catch (error) {
      // The engine checks some settings (the network) only here: a container that never started
      // is of no use, and every later try would leave one more behind in state Created.
      await this.remove(container.id).catch((removal: unknown) => {
        this.log.warn({ channel: state.key, reason: engineMessage(removal) }, 'could not remove a sandbox container');
      });
      throw settingRefused(error, this.engineSettings()) ?? error;
    }
    this.log.info({ channel: state.key, container: state.name, seeded }, 'created sandbox container');
    return container.inspect();
  }

  /** The settings as the engine sees them, DATA_DIR resolved, for naming the one it refuses. */
  engineSettings(): EngineSettings {
    return { ...this.settings, DATA_DIR: this.options.dataDir };
  }

  private async reap(state: ChannelState): Promise<void> {
    state.idleTimer = undefined;
    if (state.inFlight > 0 || state.preparing || this.closed) return;
    this.forget(state);
    try {
      await this.remove(state.name);
      this.log.info(
        { channel: state.key, minutes: this.settings.SANDBOX_IDLE_MINUTES },
        'removed idle sandbox container',
      );
    } catch (error) {
      this.log.warn({ channel: state.key, reason: engineMessage(error) }, 'could not remove idle sandbox container');
    }
  }
}
