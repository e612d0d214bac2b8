/**
 * What one bridge hands to another through the store, with bridges sharing it (replicas): an operator command, or an
 * agent's action, for a room the other bridge serves. It is left in `command_claims`; the room's bridge takes it,
 * carries it out and stores the answer, which the bridge that left it waits for here (woken by a signal, else it
 * looks every quarter of a second).
 */

import type { ActionResult } from '../../room/effects.js';
import type { Action } from '../../room/events.js';
import type { CommandClaimPort, StoreSignal } from '../../store/port.js';
import { Pause } from '../backoff.js';

/** How long the bridge that handed something on waits for its answer (Discord's token lasts 15 minutes). */
export const ANSWER_WAIT_MS = 10 * 60_000;
/** How often it looks for that answer in the store, besides being told. */
const ANSWER_POLL_MS = 250;

/** An agent's action left for the bridge serving its room (the store's `event` of an `action:` claim). */
export interface HandedAction {
  readonly kind: 'action';
  readonly platform: string;
  readonly channel: string;
  readonly action: Action;
  /** A DM room's agent (its room is made with it). */
  readonly direct?: string | undefined;
}

export type PostAction = Extract<Action, { kind: 'post' }>;

/** Where an action is handed on: a DM room's agent. */
export interface HandedTo {
  readonly direct?: string | undefined;
}

/** The claim id of an action: each is handed on once, however often its turn asks again. */
function actionId(action: Action): string {
  return `action:${action.call}`;
}

export class Relay {
  private readonly pause = new Pause();
  private stopped = false;
  /** What waits for an answer another bridge will store, by claim id: each wakes its waiter. */
  private readonly waiters = new Map<string, () => void>();

  constructor(
    private readonly deps: {
      readonly port: CommandClaimPort;
      /** REPLICA_ID. */
      readonly replica: string;
      readonly clock: () => number;
      /** How long to wait for an answer (default ANSWER_WAIT_MS). */
      readonly waitMs?: number;
    },
  ) {}

  get port(): CommandClaimPort {
    return this.deps.port;
  }

  get replica(): string {
    return this.deps.replica;
  }

  stop(): void {
    this.stopped = true;
    this.pause.stop();
    for (const wake of this.waiters.values()) wake();
  }

  /** Another bridge stored an answer (a signal): it is read now. */
  answered(id: string): void {
    this.waiters.get(id)?.();
  }

  /**
   * Leaves a claimed item for the bridge serving its room, and waits for its answer; undefined if none came. `reply`:
   * the adapter's route for that bridge to answer the operator itself, should this one be gone.
   */
  async leave(id: string, reply?: string): Promise<string | undefined> {
    await this.deps.port.wait(id, reply);
    const until = this.deps.clock() + (this.deps.waitMs ?? ANSWER_WAIT_MS);
    try {
      while (!this.stopped && this.deps.clock() < until) {
        // Registered before reading: an answer stored after the read wakes the wait at once.
        const told = new Promise<void>((resolve) => this.waiters.set(id, resolve));
        const answer = await this.deps.port.answerOf(id);
        if (answer !== undefined) return answer;
        await Promise.race([told, this.pause.wait(ANSWER_POLL_MS)]);
      }
    } finally {
      this.waiters.delete(id);
    }
    return undefined;
  }

  /**
   * An agent's action in a room another bridge serves (`platform:channel`): handed to that bridge; its result once
   * the room decided (and, for a post, once it is on the platform).
   */
  async act(room: string, action: Action, to: HandedTo = {}): Promise<ActionResult> {
    const at = room.indexOf(':');
    const handed: HandedAction = {
      kind: 'action',
      platform: room.slice(0, at),
      channel: room.slice(at + 1),
      action,
      ...(to.direct !== undefined ? { direct: to.direct } : {}),
    };
    const id = actionId(action);
    const { port, replica } = this.deps;
    await port.claim(id, handed.platform, handed.channel, JSON.stringify(handed), replica, this.deps.clock());
    const answer = await this.leave(id);
    if (answer === undefined) return { kind: 'failed', reason: `the bridge serving ${room} did not answer in time` };
    return JSON.parse(answer) as ActionResult;
  }
}

/**
 * What a signal from another bridge sharing the store sets going here: an answer wakes what waits for it; anything
 * else (an event, a note or a command kept for a room, or the listening connection back) makes the handover look now.
 */
export function onSignal(
  handover: { soon(): void },
  handed: Pick<Relay, 'answered'> | undefined,
): (signal: StoreSignal) => void {
  return (signal) => {
    if (signal.kind === 'answer') handed?.answered(signal.id);
    else handover.soon();
  };
}
