import { Allowance, measureDir, type QuotaStop, scanCap, type WorkspaceQuota } from './workspace-usage.js';

export interface WatchTiming {
  /** The first look comes this long after the command starts, the next ones at least as far apart. */
  readonly intervalMs: number;
  /** A slow measurement spaces the next one out to this many times its own duration. */
  readonly costFactor: number;
}

/** The same rhythm as the command runner's watch (sandbox/runner.py: WATCH_INTERVAL, WATCH_COST_FACTOR). */
export const WATCH_TIMING: WatchTiming = { intervalMs: 100, costFactor: 4 };

/**
 * Watches a workspace from the host while one command runs, for the one-exec-per-command path (the
 * command runner watches from inside the container): its signal aborts when the command takes the
 * workspace past its allowance (see Allowance), and `finish` says which limit it was.
 */
export class WorkspaceWatch {
  private readonly controller = new AbortController();
  private readonly allowance: Allowance;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;
  private stopped: QuotaStop | undefined;

  constructor(
    private readonly dir: string,
    private readonly quota: WorkspaceQuota,
    private readonly timing: WatchTiming = WATCH_TIMING,
  ) {
    this.allowance = new Allowance(quota);
    this.schedule(timing.intervalMs);
  }

  /** Aborts when the command is to be stopped. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Ends the watch; the limit the command was stopped for, if it was. */
  finish(): QuotaStop | undefined {
    this.finished = true;
    clearTimeout(this.timer);
    return this.stopped;
  }

  private schedule(delayMs: number): void {
    if (this.finished) return;
    this.timer = setTimeout(() => void this.look(), delayMs);
  }

  private async look(): Promise<void> {
    const started = performance.now();
    const usage = await measureDir(this.dir, {
      cap: scanCap(this.quota.files),
      stopAbove: this.allowance.stopAbove,
    });
    if (this.finished) return;
    const stop = this.allowance.judge(usage);
    if (stop) {
      this.stopped = stop;
      this.controller.abort();
      return;
    }
    const cost = performance.now() - started;
    this.schedule(Math.max(this.timing.intervalMs, this.timing.costFactor * cost));
  }
}
