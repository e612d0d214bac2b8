import path from 'node:path';
import type Dockerode from 'dockerode';
import type { Settings } from '../src/config/index.js';
import { SandboxError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import type { ExecResult, ProcessSpec, Sandbox, SandboxProcess, WorkspaceFiles } from '../src/ports.js';
import {
  ChannelContainers,
  type ChannelState,
  EXEC_FAILED,
  EXEC_FAILED_EXIT,
  type LiveContainer,
} from './channel-containers.js';
import { RunnerUnavailable } from './command-runner.js';
import { HELPER_TIMEOUT_MS } from './container-probe.js';
import { parseMemory } from './container-spec.js';
import { DiskQuota, type MeasureWorkspace, parseDiskLimit } from './disk-quota.js';
import { checkDocker } from './docker-check.js';
import { engineMessage, hasStatus, toSandboxError } from './docker-errors.js';
import { spawnInChannel } from './docker-process.js';
import { engineClient, engineId } from './engine-client.js';
import { appendNote, cleanUpAfterRunnerLoss, containerStopped, explainKill, type Outcome } from './kill-report.js';
import { type RunOptions, runExec } from './run-exec.js';
import { describeState } from './status-line.js';
import { volumeFiles } from './volume-files.js';
import { effectiveLimits, fileSystemOf, IN_MEMORY } from './workspace-fs.js';
import { hostFolderMeasure, inContainerMeasure } from './workspace-measure.js';
import { BindWorkspaces, VolumeWorkspaces, type WorkspaceStorage } from './workspace-storage.js';
import { sizeLabel, type WorkspaceLimits } from './workspace-usage.js';
import { WorkspaceWatch } from './workspace-watch.js';

export interface DockerSandboxOptions {
  readonly settings: Settings;
  readonly logger: Logger;
  /** Injectable engine client; by default the one DOCKER_HOST (and its TLS settings) name. */
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

const SIGKILL_EXIT = 137;

/** One hardened Docker container per channel, created lazily, adopted after a restart (issue 3). */
export function createDockerSandbox(options: DockerSandboxOptions): Sandbox {
  return new DockerSandbox(options);
}

/** Runs a channel's commands in its container (ChannelContainers finds or makes it), and explains how each ended. */
class DockerSandbox implements Sandbox {
  private readonly docker: Dockerode;
  private readonly settings: Settings;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly dataDir: string;
  private readonly containers: ChannelContainers;
  /** SANDBOX_DISK and SANDBOX_FILES as configured; the file system of the workspaces may lower them. */
  private readonly limits: WorkspaceLimits;
  private disk: Promise<{ quota: DiskQuota; inMemory: boolean }> | undefined;
  private readonly workspaces: WorkspaceStorage;
  /** How a workspace is measured for its allowance: on the host (bind) or in its container (volume). */
  private readonly measure: MeasureWorkspace;
  /** A workspace's host folder, when workspaces are host folders: the one-exec path watches it from here. */
  private readonly hostDir: ((channelKey: string) => string) | undefined;
  /** A workspace that is a host folder (SANDBOX_WORKSPACES=bind): the file tools and uploads use it directly. */
  readonly workspaceDir?: (channelKey: string) => string;
  readonly ensureWorkspace?: (channelKey: string) => Promise<string>;
  /** A workspace that is a volume: its files go through the engine. */
  readonly workspaceFiles?: (channelKey: string) => Promise<WorkspaceFiles>;
  /** Ends a start-up check still running at shutdown (its throw-away container is removed). */
  private readonly checks = new AbortController();
  private checking: Promise<unknown> | undefined;
  private closed = false;

  constructor(options: DockerSandboxOptions) {
    this.settings = options.settings;
    // Fail at start-up on a bad limit rather than at the first command.
    parseMemory(this.settings.SANDBOX_MEMORY);
    this.limits = { bytes: parseDiskLimit(this.settings.SANDBOX_DISK), files: this.settings.SANDBOX_FILES };
    this.docker = options.docker ?? engineClient(this.settings);
    this.log = options.logger.child({ component: 'sandbox' });
    this.clock = options.clock ?? Date.now;
    this.dataDir = path.resolve(this.settings.DATA_DIR);
    const template = this.settings.SANDBOX_TEMPLATE_DIR;
    if (this.settings.SANDBOX_WORKSPACES === 'volume') {
      this.workspaces = new VolumeWorkspaces(this.docker, this.dataDir, template);
      this.measure = inContainerMeasure((key) => this.liveContainer(key));
      this.hostDir = undefined;
      this.workspaceFiles = async (key) => volumeFiles(await this.liveContainer(key));
    } else {
      const bind = new BindWorkspaces(this.dataDir, template);
      this.workspaces = bind;
      this.hostDir = (key) => bind.dir(key);
      this.measure = hostFolderMeasure(this.hostDir);
      this.workspaceDir = (key) => bind.dir(key);
      // No container needed: the folder is made (and seeded) here, so an upload lands even without Docker.
      this.ensureWorkspace = async (key) => {
        await bind.prepare(key);
        return bind.dir(key);
      };
    }
    this.containers = new ChannelContainers({
      docker: this.docker,
      settings: this.settings,
      log: this.log,
      dataDir: this.dataDir,
      workspaces: this.workspaces,
      runner: options.commandRunner ?? true,
      runnerSource: options.runnerSource,
      probeTimeoutMs: options.probeTimeoutMs ?? HELPER_TIMEOUT_MS,
    });
  }

  /**
   * The workspaces' allowance, once the file system they are on is known (in memory it is lowered, see
   * effectiveLimits), and whether that file system keeps them in memory. A volume's file system is the
   * engine's, out of the bridge's sight: its allowance is taken as configured.
   */
  private diskQuota(): Promise<{ quota: DiskQuota; inMemory: boolean }> {
    this.disk ??= this.workspacesFileSystem().then((fileSystem) => {
      const { limits, lowered } = effectiveLimits(this.limits, parseMemory(this.settings.SANDBOX_MEMORY), fileSystem);
      if (lowered) {
        this.log.warn(
          { fileSystem, SANDBOX_DISK: this.settings.SANDBOX_DISK, SANDBOX_MEMORY: this.settings.SANDBOX_MEMORY },
          `workspace disk allowance lowered to ${sizeLabel(limits.bytes)}, half of SANDBOX_MEMORY: ${lowered}`,
        );
      }
      return { quota: new DiskQuota(limits, this.measure), inMemory: IN_MEMORY.has(fileSystem) };
    });
    return this.disk;
  }

  private async workspacesFileSystem(): Promise<string> {
    if (!this.hostDir) return 'unknown';
    return fileSystemOf(path.join(this.dataDir, 'workspaces')).catch(() => 'unknown');
  }

  /**
   * The channel's running container, for what reaches its workspace from outside a command (files, the disk
   * measure): made when missing, and then reaped when idle like one a command made.
   */
  private async liveContainer(channelKey: string): Promise<Dockerode.Container> {
    if (this.closed) throw new SandboxError('the sandbox is shut down');
    const state = this.containers.channel(channelKey);
    try {
      await this.containers.adoptAll();
      const live = await this.containers.ensure(state);
      if (state.inFlight === 0) this.containers.armIdle(state);
      return live.container;
    } catch (error) {
      const failure = toSandboxError(error, { docker: this.docker, image: this.settings.SANDBOX_IMAGE });
      this.log.warn({ channel: channelKey, err: failure.cause ?? failure }, failure.message);
      throw failure;
    }
  }

  async exec(
    channelKey: string,
    command: string,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<ExecResult> {
    if (this.closed) throw new SandboxError('the sandbox is shut down');
    if (options.signal?.aborted) return { output: '[aborted]', exitCode: null, timedOut: false };
    const state = this.containers.channel(channelKey);
    state.inFlight += 1;
    this.containers.clearIdle(state);
    state.lastCommand = { text: command, at: this.clock() };
    try {
      await this.containers.adoptAll();
      const disk = await this.diskQuota();
      const { fsize, quota } = await disk.quota.beforeCommand(channelKey);
      const runOptions: RunOptions = { ...options, fsize, quota, measureDisk: disk.quota.enabled };
      let { live, outcome } = await this.run(state, command, runOptions);
      if (outcome.spawnError || (outcome.exitCode === EXEC_FAILED_EXIT && EXEC_FAILED.test(outcome.output))) {
        // The command could not even start: typically a fork bomb's leftovers still hold
        // every pid. A fresh container (same workspace) is the way out.
        const reason = outcome.spawnError ?? outcome.output.trim();
        this.log.warn({ channel: channelKey, reason }, 'sandbox container wedged; recreating');
        this.containers.forget(state);
        await this.containers.remove(state.name);
        ({ live, outcome } = await this.run(state, command, runOptions));
      }
      if (outcome.containerKilled) this.containers.forget(state);
      let output = await this.explainEnd(state, live, outcome, disk.inMemory);
      // The stop (or the workspace over a limit) is said once, with how much it holds.
      const full = await disk.quota.afterCommand(channelKey, outcome.usage, outcome.quotaStop);
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
      this.containers.armIdle(state);
    }
  }

  /** A long-lived process in the channel's container (sandbox/docker-process.ts). */
  async spawn(channelKey: string, spec: ProcessSpec): Promise<SandboxProcess> {
    if (this.closed) throw new SandboxError('the sandbox is shut down');
    try {
      await this.containers.adoptAll();
      const { fsize } = await (await this.diskQuota()).quota.beforeCommand(channelKey);
      return await spawnInChannel(this.containers, this.containers.channel(channelKey), spec, fsize);
    } catch (error) {
      const failure = toSandboxError(error, { docker: this.docker, image: this.settings.SANDBOX_IMAGE });
      this.log.warn({ channel: channelKey, command: spec.command, err: failure.cause ?? failure }, failure.message);
      throw failure;
    }
  }

  /** The command's output, with a note on how it ended when it did not end by itself. */
  private async explainEnd(
    state: ChannelState,
    live: LiveContainer,
    outcome: Outcome,
    inMemory: boolean,
  ): Promise<string> {
    if (outcome.spawnError) return appendNote(outcome.output, `[the command could not start: ${outcome.spawnError}]`);
    if (outcome.aborted) return appendNote(outcome.output, '[aborted]');
    const access = this.containers.access(state);
    let end: { note: string; stopped: boolean; outOfMemory: boolean } | undefined;
    if (outcome.quotaStop) {
      // Stopped on purpose (the disk quota's note says so); the container may have died meanwhile.
      const gone = await containerStopped(live, access);
      end = gone && { ...gone, stopped: true };
      if (!gone && inMemory) {
        // In memory the files written stay charged to this container, so the next command (the `rm` that frees
        // them included) could run out of memory here: it runs in a fresh container, files in /workspace kept.
        if (state.live?.id === live.id) this.containers.forget(state);
        await this.containers.remove(state.name).catch(() => undefined);
      }
    } else if (!outcome.timedOut && (outcome.exitCode === SIGKILL_EXIT || outcome.exitCode === null)) {
      end = await explainKill(live, access, outcome, this.settings.SANDBOX_MEMORY);
    }
    if (!end) return outcome.output;
    if (end.stopped) {
      if (state.live?.id === live.id) this.containers.forget(state);
    } else if (end.outOfMemory && inMemory) {
      // In memory the workspace's files stay charged to the container that wrote them, so every later
      // command, `rm` included, could run out of memory there: a fresh container has a fresh account.
      if (state.live?.id === live.id) this.containers.forget(state);
      await this.containers.remove(state.name).catch(() => undefined);
      return appendNote(
        outcome.output,
        `[killed: out of memory (the sandbox's limit is ${this.settings.SANDBOX_MEMORY}, and the workspace is in ` +
          'memory, where its files count against it); a fresh container is created for the next command, files in ' +
          '/workspace are kept]',
      );
    }
    return appendNote(outcome.output, end.note);
  }

  /** Runs the command in the channel's container, recreating it once if it vanished or stopped meanwhile. */
  private async run(
    state: ChannelState,
    command: string,
    options: RunOptions,
  ): Promise<{ live: LiveContainer; outcome: Outcome }> {
    const live = await this.containers.ensure(state);
    try {
      return { live, outcome: await this.runIn(state, live, command, options) };
    } catch (error) {
      if (!hasStatus(error, 404, 409, 500)) throw error;
      this.log.info({ channel: state.key, reason: engineMessage(error) }, 'sandbox container gone; recreating');
      if (state.live === live) this.containers.forget(state);
      const fresh = await this.containers.ensure(state);
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
        return await cleanUpAfterRunnerLoss(live, this.containers.access(state), outcome);
      } catch (error) {
        // Already gone, nothing sent.
        if (!(error instanceof RunnerUnavailable)) throw error;
      }
    }
    return this.runExecWatched(state, live, command, options);
  }

  /** One exec for the command; with a quota the workspace is watched from here, as the runner would inside. */
  private async runExecWatched(
    state: ChannelState,
    live: LiveContainer,
    command: string,
    options: RunOptions,
  ): Promise<Outcome> {
    // A volume cannot be watched from here: it is measured in the container once the command ends.
    if (!options.quota || !this.hostDir) return runExec(live, command, options);
    const watch = new WorkspaceWatch(this.hostDir(state.key), options.quota);
    const signal = options.signal ? AbortSignal.any([options.signal, watch.signal]) : watch.signal;
    try {
      const outcome = await runExec(live, command, { ...options, signal });
      const quotaStop = watch.finish();
      if (!quotaStop || options.signal?.aborted) return outcome;
      return { ...outcome, aborted: false, quotaStop };
    } finally {
      watch.finish();
    }
  }

  /** File tools check here before they write into the workspace (SANDBOX_DISK). */
  async checkDisk(channelKey: string, adding: number, files?: number): Promise<void> {
    const { quota } = await this.diskQuota();
    await quota.beforeWrite(channelKey, adding, files);
  }

  engine(): Promise<string | undefined> {
    return engineId(this.docker, this.checks.signal, this.log);
  }

  async describe(channelKey: string): Promise<string> {
    const state = this.containers.channel(channelKey);
    try {
      const info = await this.containers.inspect(state.name);
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
    const state = this.containers.channel(channelKey);
    this.containers.clearIdle(state);
    this.containers.forget(state);
    state.lastCommand = undefined;
    let failure: SandboxError | undefined;
    try {
      await this.containers.remove(state.name);
    } catch (error) {
      failure = toSandboxError(error, { docker: this.docker, image: this.settings.SANDBOX_IMAGE });
    }
    // A host folder is wiped even when Docker is down; a volume needs the engine.
    if (options?.wipeWorkspace) {
      await this.workspaces.wipe(channelKey).catch((error: unknown) => {
        failure ??= toSandboxError(error, { docker: this.docker, image: this.settings.SANDBOX_IMAGE });
      });
    }
    (await this.diskQuota()).quota.forget(channelKey);
    this.log.info({ channel: channelKey, wipeWorkspace: options?.wipeWorkspace ?? false }, 'sandbox reset');
    if (failure) throw failure;
  }

  async check(): Promise<readonly string[]> {
    if (this.closed) return [];
    // Learns the workspaces' file system now, so an allowance it lowers is logged at start-up.
    void this.diskQuota();
    const running = checkDocker(this.containers.engineSettings(), this.docker, { signal: this.checks.signal });
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
    await this.containers.close();
  }
}
