import type Dockerode from 'dockerode';
import type { Logger } from '../src/log.js';
import { CommandRunner } from './command-runner.js';
import { HELPER_TIMEOUT_MS } from './container-probe.js';
import { engineMessage } from './docker-errors.js';

/** After this many failed starts in one container, it keeps to one exec per command. */
const MAX_START_FAILURES = 2;

export interface RunnerSlotOptions {
  readonly logger: Logger;
  /** The Python source to run; the bundled sandbox/runner.py by default. */
  readonly source: string | undefined;
  /** The digest of the runner baked into the image, if the probe found one. */
  readonly bakedDigest: string | undefined;
}

/**
 * One container's command runner: started on first use (concurrent callers share the start),
 * started again after it died, given up on after repeated failed starts. `undefined` from
 * `get()` means: use the exec-API path.
 */
export class RunnerSlot {
  private runner: CommandRunner | undefined;
  private starting: Promise<CommandRunner | undefined> | undefined;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly container: Dockerode.Container,
    private readonly options: RunnerSlotOptions,
  ) {}

  get(): Promise<CommandRunner | undefined> {
    if (this.closed || this.failures >= MAX_START_FAILURES) return Promise.resolve(undefined);
    if (this.runner?.alive) return Promise.resolve(this.runner);
    this.runner = undefined;
    this.starting ??= CommandRunner.start(this.container, {
      logger: this.options.logger,
      helloTimeoutMs: HELPER_TIMEOUT_MS,
      source: this.options.source,
      bakedDigest: this.options.bakedDigest,
    })
      .then(
        (runner) => {
          // The container was dropped while the runner started.
          if (this.closed) {
            runner.close();
            return undefined;
          }
          this.runner = runner;
          return runner;
        },
        (error: unknown) => {
          this.failures += 1;
          this.options.logger.warn(
            { reason: engineMessage(error), failures: this.failures },
            'sandbox command runner unavailable; using one exec per command',
          );
          return undefined;
        },
      )
      .finally(() => {
        this.starting = undefined;
      });
    return this.starting;
  }

  /** Stops the runner for good (the container is being dropped or the sandbox closed). */
  close(): void {
    this.closed = true;
    this.runner?.close();
    this.runner = undefined;
  }
}
