import path from 'node:path';
import Dockerode from 'dockerode';
import type { Settings } from '../src/config/index.js';
import { SandboxError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import type { ExecResult, Sandbox } from '../src/ports.js';
import { channelSlug, containerName } from './channel-key.js';
import { RunnerUnavailable } from './command-runner.js';
import { HELPER_TIMEOUT_MS, parseOomKills, parseRunnerDigest, probeContainer } from './container-probe.js';
import { containerSpec, LABEL_CHANNEL, LABEL_PROJECT, LABEL_SCOPE, PROJECT, parseMemory } from './container-spec.js';
import { DiskQuota, parseDiskLimit } from './disk-quota.js';
import { checkDocker } from './docker-check.js';
import {
  type EngineSettings,
  engineMessage,
  hasStatus,
  settingRefused,
  toSandboxError,
  workspaceError,
} from './docker-errors.js';
import { appendNote, type ContainerAccess, cleanUpAfterRunnerLoss, explainKill, type Outcome } from './kill-report.js';
import { type ExecTarget, type RunOptions, runExec } from './run-exec.js';
import { RunnerSlot } from './runner-slot.js';
import { describeState } from './status-line.js';
import { prepareWorkspace, wipeWorkspace } from './workspace.js';

export interface DockerSandboxOptions {
  readonly settings: Settings;
  readonly logger: Logger;
  /** Injectable engine client; by default `new Dockerode()`, which honours DOCKER_HOST. */
  readonly docker?: Dockerode;
  readonly clock?: () => number;
  /**
   * Run commands through a long-lived runner in each container (default), one Docker exec per
   * command when false. The exec-API path is also the fallback when a runner cannot start.
   */
  readonly commandRunner?: boolean;
  /** The runner's Python source to inject instead of sandbox/runner.py (tests use it). */
  readonly runnerSource?: string;
  /** How long a new container's start-up probe may take (default HELPER_TIMEOUT_MS; tests shorten it). */
  readonly probeTimeoutMs?: number;
}

/** A container this process uses, with what the probe learnt about it. */
interface LiveContainer extends ExecTarget {
  readonly id: string;
  readonly startedAt: number;
  /** The memory cgroup's OOM-kill count last seen, to tell an OOM kill from any other SIGKILL. */
  oomKills: number;
  /** The container's command runner (the fast path); none when it is switched off. */
  readonly runner: RunnerSlot | undefined;
}

interface ChannelState {
  readonly key: string;
  readonly name: string;
  live: LiveContainer | undefined;
  preparing: Promise<LiveContainer> | undefined;
  lastCommand: { readonly text: string; readonly at: number } | undefined;
  inFlight: number;
  idleTimer: NodeJS.Timeout | undefined;
}

const SIGKILL_EXIT = 137;
/** What Docker answers when the runtime cannot start an exec's process at all. */
const EXEC_FAILED_EXIT = 126;
const EXEC_FAILED = /^OCI runtime exec failed/;

const duration = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

/** One hardened Docker container per channel, created lazily, adopted after a restart (issue 3). */
export function createDockerSandbox(options: DockerSandboxOptions): Sandbox {
  return new DockerSandbox(options);
}

class DockerSandbox implements Sandbox {
  private readonly docker: Dockerode;
  private readonly settings: Settings;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly dataDir: string;
  private readonly channels = new Map<string, ChannelState>();
  private readonly runnerEnabled: boolean;
  private readonly runnerSource: string | undefined;
  private readonly disk: DiskQuota;
  private readonly probeTimeoutMs: number;
  private adoption: Promise<void> | undefined;
  /** Ends a start-up check still running at shutdown (its throw-away container is removed). */
  private readonly checks = new AbortController();
  private checking: Promise<unknown> | undefined;
  private closed = false;

  constructor(options: DockerSandboxOptions) {
    this.settings = options.settings;
    // Fail at start-up on a bad limit rather than at the first command.
    parseMemory(this.settings.SANDBOX_MEMORY);
    this.disk = new DiskQuota(parseDiskLimit(this.settings.SANDBOX_DISK));
    this.docker = options.docker ?? new Dockerode();
    this.log = options.logger.child({ component: 'sandbox' });
    this.clock = options.clock ?? Date.now;
    this.dataDir = path.resolve(this.settings.DATA_DIR);
    this.runnerEnabled = options.commandRunner ?? true;
    this.runnerSource = options.runnerSource;
    this.probeTimeoutMs = options.probeTimeoutMs ?? HELPER_TIMEOUT_MS;
  }

  workspaceDir(channelKey: string): string {
    return path.join(this.dataDir, 'workspaces', channelSlug(channelKey));
  }

  /** No container needed: the folder is made (and seeded) here, so an upload lands even without Docker. */
  async ensureWorkspace(channelKey: string): Promise<string> {
    const dir = this.workspaceDir(channelKey);
    await prepareWorkspace(dir, this.settings.SANDBOX_TEMPLATE_DIR);
    return dir;
  }

  async exec(
    channelKey: string,
    command: string,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<ExecResult> {
    if (this.closed) throw new SandboxError('the sandbox is shut down');
    if (options.signal?.aborted) return { output: '[aborted]', exitCode: null, timedOut: false };
    const state = this.channel(channelKey);
    state.inFlight += 1;
    this.clearIdle(state);
    state.lastCommand = { text: command, at: this.clock() };
    try {
      await this.adoptAll();
      const dir = this.workspaceDir(channelKey);
      const fsize = await this.disk.beforeCommand(channelKey, dir);
      const runOptions: RunOptions = { ...options, fsize, measureDisk: this.disk.enabled };
      let { live, outcome } = await this.run(state, command, runOptions);
      if (outcome.spawnError || (outcome.exitCode === EXEC_FAILED_EXIT && EXEC_FAILED.test(outcome.output))) {
        // The command could not even start: typically a fork bomb's leftovers still hold
        // every pid. A fresh container (same workspace) is the way out.
        const reason = outcome.spawnError ?? outcome.output.trim();
        this.log.warn({ channel: channelKey, reason }, 'sandbox container wedged; recreating');
        this.forget(state);
        await this.remove(state.name);
        ({ live, outcome } = await this.run(state, command, runOptions));
      }
      if (outcome.containerKilled) this.forget(state);
      let output = outcome.output;
      if (outcome.spawnError) output = appendNote(output, `[the command could not start: ${outcome.spawnError}]`);
      else if (outcome.aborted) output = appendNote(output, '[aborted]');
      else if (!outcome.timedOut && (outcome.exitCode === SIGKILL_EXIT || outcome.exitCode === null)) {
        const { note, stopped } = await explainKill(live, this.access(state), outcome, this.settings.SANDBOX_MEMORY);
        if (stopped && state.live?.id === live.id) this.forget(state);
        output = appendNote(output, note);
      }
      const full = await this.disk.afterCommand(channelKey, dir, outcome.diskUsed);
      if (full) output = appendNote(output, full);
      // Kept current so a later SIGKILL is not taken for an OOM kill that happened before it.
      if (outcome.oomKills !== undefined) live.oomKills = Math.max(live.oomKills, outcome.oomKills);
      return { output, exitCode: outcome.exitCode, timedOut: outcome.timedOut };
    } catch (error) {
      const failure = toSandboxError(error, { docker: this.docker, image: this.settings.SANDBOX_IMAGE });
      this.log.warn({ channel: channelKey, err: failure.cause ?? failure }, failure.message);
      throw failure;
    } finally {
      state.inFlight -= 1;
      this.armIdle(state);
    }
  }

  /** Runs the command in the channel's container, recreating it once if it vanished or stopped meanwhile. */
  private async run(
    state: ChannelState,
    command: string,
    options: RunOptions,
  ): Promise<{ live: LiveContainer; outcome: Outcome }> {
    const live = await this.ensure(state);
    try {
      return { live, outcome: await this.runIn(state, live, command, options) };
    } catch (error) {
      if (!hasStatus(error, 404, 409, 500)) throw error;
      this.log.info({ channel: state.key, reason: engineMessage(error) }, 'sandbox container gone; recreating');
      if (state.live === live) this.forget(state);
      const fresh = await this.ensure(state);
      return { live: fresh, outcome: await this.runIn(state, fresh, command, options) };
    }
  }

  /** The fast path through the container's runner when it has one, else one exec for this command. */
  private async runIn(
    state: ChannelState,
    live: LiveContainer,
    command: string,
    options: RunOptions,
  ): Promise<Outcome> {
    // A runner that died before it received the command (e.g. killed between commands, its
    // stream not yet seen closing) did not run it: a fresh runner may, then the exec-API path.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const runner = await live.runner?.get();
      if (!runner) break;
      try {
        const outcome = await runner.run(command, options);
        if (!outcome.runnerLost) return outcome;
        // A runner that went silent past a time limit is not given the command a second time.
        if (!outcome.accepted && !outcome.timedOut && !outcome.aborted) continue;
        this.log.warn({ channel: state.key }, 'sandbox command runner stopped during a command');
        return await cleanUpAfterRunnerLoss(live, this.access(state), outcome);
      } catch (error) {
        // Already gone, nothing sent.
        if (!(error instanceof RunnerUnavailable)) throw error;
      }
    }
    return runExec(live, command, options);
  }

  /** File tools check here before they write into the workspace (SANDBOX_DISK). */
  async checkDisk(channelKey: string, adding: number): Promise<void> {
    await this.disk.beforeWrite(channelKey, this.workspaceDir(channelKey), adding);
  }

  async describe(channelKey: string): Promise<string> {
    const state = this.channel(channelKey);
    try {
      const info = await this.inspect(state.name);
      return describeState({
        container: info ? (info.State.Running ? (state.inFlight > 0 ? 'running' : 'idle') : 'stopped') : 'absent',
        startedAt: info?.State.Running ? Date.parse(info.State.StartedAt) : undefined,
        lastCommand: state.lastCommand,
        now: this.clock(),
      });
    } catch (error) {
      return `sandbox unavailable: ${toSandboxError(error, { docker: this.docker, image: this.settings.SANDBOX_IMAGE }).message}`;
    }
  }

  async reset(channelKey: string, options?: { wipeWorkspace?: boolean }): Promise<void> {
    const state = this.channel(channelKey);
    this.clearIdle(state);
    this.forget(state);
    state.lastCommand = undefined;
    let failure: SandboxError | undefined;
    try {
      await this.remove(state.name);
    } catch (error) {
      failure = toSandboxError(error, { docker: this.docker, image: this.settings.SANDBOX_IMAGE });
    }
    // The workspace is wiped even when Docker is down: it is only a host folder.
    if (options?.wipeWorkspace) await wipeWorkspace(this.workspaceDir(channelKey));
    this.disk.forget(channelKey);
    this.log.info({ channel: channelKey, wipeWorkspace: options?.wipeWorkspace ?? false }, 'sandbox reset');
    if (failure) throw failure;
  }

  async check(): Promise<readonly string[]> {
    if (this.closed) return [];
    const running = checkDocker(this.engineSettings(), this.docker, { signal: this.checks.signal });
    this.checking = running.catch(() => undefined);
    const results = await running;
    // Cut short by close(): what it found then says nothing about the settings.
    if (this.checks.signal.aborted) return [];
    return results.filter((result) => !result.ok).map((result) => result.detail);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.checks.abort();
    await this.checking;
    for (const state of this.channels.values()) {
      this.clearIdle(state);
      state.live?.runner?.close();
    }
    if (this.settings.SANDBOX_KEEP_ON_EXIT) return;
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

  /** Drops what we know about the channel's container, and its runner with it. */
  private forget(state: ChannelState): void {
    state.live?.runner?.close();
    state.live = undefined;
  }

  private channel(key: string): ChannelState {
    let state = this.channels.get(key);
    if (!state) {
      state = {
        key,
        name: containerName(this.dataDir, key),
        live: undefined,
        preparing: undefined,
        lastCommand: undefined,
        inFlight: 0,
        idleTimer: undefined,
      };
      this.channels.set(key, state);
    }
    return state;
  }

  /** The channel's running container: the one we know, an existing one (adopted), or a new one. */
  private async ensure(state: ChannelState): Promise<LiveContainer> {
    if (state.live) return state.live;
    state.preparing ??= this.prepare(state).finally(() => {
      state.preparing = undefined;
    });
    return state.preparing;
  }

  private async prepare(state: ChannelState, retry = true): Promise<LiveContainer> {
    let info = await this.inspect(state.name);
    if (info && !info.State.Running) {
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
    const container = this.docker.getContainer(info.Id);
    const probe = await probeContainer(container, this.probeTimeoutMs).catch((error: unknown) => {
      // It died between inspect and probe (killed by hand, OOM): start over once with a fresh one.
      if (hasStatus(error, 404, 409) && retry) return undefined;
      throw error;
    });
    if (!probe || (retry && probe.exitCode === EXEC_FAILED_EXIT && EXEC_FAILED.test(probe.output))) {
      await this.remove(state.name);
      return this.prepare(state, false);
    }
    if (probe.exitCode === null) {
      // Slow is not broken: say so, rather than blame the image.
      throw new SandboxError(
        `the sandbox container did not answer its start-up check within ${duration(this.probeTimeoutMs)} ` +
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
      runner: this.runnerEnabled
        ? new RunnerSlot(container, {
            logger: this.log.child({ channel: state.key }),
            source: this.runnerSource,
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
    const workspaceDir = this.workspaceDir(state.key);
    const seeded = await prepareWorkspace(workspaceDir, this.settings.SANDBOX_TEMPLATE_DIR).catch((error: unknown) => {
      throw workspaceError(error, workspaceDir, this.settings.SANDBOX_TEMPLATE_DIR);
    });
    const spec = containerSpec({
      name: state.name,
      channelKey: state.key,
      scope: this.dataDir,
      workspaceDir,
      settings: this.settings,
    });
    let container: Dockerode.Container;
    try {
      container = await this.docker.createContainer(spec);
    } catch (error) {
      throw settingRefused(error, this.engineSettings()) ?? error;
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
  private engineSettings(): EngineSettings {
    return { ...this.settings, DATA_DIR: this.dataDir };
  }

  /**
   * Adopts, once, the containers a previous bridge process left running for this data folder,
   * so idle reaping and shutdown cover them too; stopped leftovers are removed.
   */
  private adoptAll(): Promise<void> {
    this.adoption ??= (async () => {
      const found = await this.docker.listContainers({
        all: true,
        filters: { label: [`${LABEL_PROJECT}=${PROJECT}`, `${LABEL_SCOPE}=${this.dataDir}`] },
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

  private armIdle(state: ChannelState): void {
    this.clearIdle(state);
    const minutes = this.settings.SANDBOX_IDLE_MINUTES;
    if (this.closed || minutes <= 0 || state.inFlight > 0) return;
    state.idleTimer = setTimeout(() => void this.reap(state), minutes * 60_000);
    // An idle timer must never keep the process alive.
    state.idleTimer.unref();
  }

  private clearIdle(state: ChannelState): void {
    if (state.idleTimer) clearTimeout(state.idleTimer);
    state.idleTimer = undefined;
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

  private access(state: ChannelState): ContainerAccess {
    return { inspect: () => this.inspect(state.name), remove: () => this.remove(state.name) };
  }

  private async inspect(name: string): Promise<Dockerode.ContainerInspectInfo | undefined> {
    try {
      return await this.docker.getContainer(name).inspect();
    } catch (error) {
      if (hasStatus(error, 404)) return undefined;
      throw error;
    }
  }

  private async remove(nameOrId: string): Promise<void> {
    try {
      await this.docker.getContainer(nameOrId).remove({ force: true });
    } catch (error) {
      // 404: already gone; 409: removal already in progress.
      if (!hasStatus(error, 404, 409)) throw error;
    }
  }
}
