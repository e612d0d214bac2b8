/**
 * One serial actor per room: tasks run strictly in order. Agent turns carry the epoch they were
 * queued in; a human message or an operator command starts a new epoch, which drops queued turns.
 */
export class ChannelActor {
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Bumped by a human message (drop queued turns) and by /pass and /reset. */
  epoch = 0;
  /** The agent turns in flight, by agent name, so /pass can stop them. */
  readonly inFlight = new Map<string, AbortController>();

  constructor(private readonly onError: (error: unknown) => void) {}

  get busy(): boolean {
    return this.queued > 0;
  }

  /** Runs `task` after everything queued before it; errors go to onError, never to the caller. */
  enqueue(task: () => Promise<void>): Promise<void> {
    this.queued++;
    const run = this.tail.then(async () => {
      try {
        await task();
      } catch (error) {
        this.onError(error);
      } finally {
        this.queued--;
      }
    });
    this.tail = run;
    return run;
  }

  /** Queues an agent turn that is skipped if a new epoch started before it runs. */
  enqueueTurn(task: () => Promise<void>): Promise<void> {
    const epoch = this.epoch;
    return this.enqueue(async () => {
      if (epoch === this.epoch) await task();
    });
  }

  /** Drops queued turns (in-flight ones finish). */
  newEpoch(): void {
    this.epoch++;
  }

  /** Drops queued turns and aborts in-flight ones (all, or one agent's). */
  stop(agent?: string): number {
    let stopped = 0;
    if (!agent) this.epoch++;
    for (const [name, controller] of this.inFlight) {
      if (agent && name.toLowerCase() !== agent.toLowerCase()) continue;
      controller.abort(new Error(agent ? 'passed by an operator' : 'stopped by an operator'));
      stopped++;
    }
    return stopped;
  }

  /** Resolves when nothing is queued or running. */
  async idle(): Promise<void> {
    while (this.queued > 0) await this.tail;
  }
}
