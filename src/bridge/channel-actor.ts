/**
 * One serial actor per room: tasks run strictly in order. Two counters decide what queued work still
 * runs: the epoch (a human message or an operator command: earlier rounds and agent turns give way)
 * and the turn generation (also bumped by a hand-back: queued agent turns are dropped, but a human's
 * message still waiting for its round is answered).
 */
export class ChannelActor {
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Bumped by a human message and by /pass, /reset. */
  epoch = 0;
  /** Bumped with the epoch, and by a hand-back to the humans. */
  private generation = 0;
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

  /** Queues an agent turn that is skipped if a human spoke, an operator acted, or control was handed back. */
  enqueueTurn(task: () => Promise<void>): Promise<void> {
    const generation = this.generation;
    return this.enqueue(async () => {
      if (generation === this.generation) await task();
    });
  }

  /** Queues a human message's round: skipped if a newer human message or an operator command came first. */
  enqueueRound(task: () => Promise<void>): Promise<void> {
    const epoch = this.epoch;
    return this.enqueue(async () => {
      if (epoch === this.epoch) await task();
    });
  }

  /** A human spoke: queued rounds and turns give way (in-flight ones finish). */
  newEpoch(): void {
    this.epoch++;
    this.generation++;
  }

  /** Control went to the humans: queued agent turns are dropped. */
  dropTurns(): void {
    this.generation++;
  }

  /** Drops queued work and aborts in-flight turns (all, or one agent's). */
  stop(agent?: string): number {
    let stopped = 0;
    if (!agent) this.newEpoch();
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
