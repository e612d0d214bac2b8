/**
 * Operator commands: each is carried out by the room it is issued in (the room's decision answers it). With bridges
 * sharing the store (replicas), a command that has a platform id is claimed once by that id: a bridge that finds it
 * claimed does nothing (the claiming one answers), and one that claims it for a room another bridge serves leaves it
 * in the store, where the room's bridge takes it, carries it out and stores the answer for the operator.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import type { CommandEvent } from '../ports.js';
import { redact } from '../secrets.js';
import type { CommandClaimPort } from '../store/port.js';
import { Pause } from './backoff.js';
import type { Calls } from './calls.js';
import { RoomElsewhere, type Rooms } from './rooms.js';

const HELD_COMMAND = 'the bridge cannot save to its store right now; it is carried out as soon as it can.';
const REFUSED_COMMAND = 'the bridge cannot save to its store right now, and too much waits already.';

/** How long the bridge that claimed a command waits for another bridge's answer (Discord's token lasts 15 minutes). */
export const ANSWER_WAIT_MS = 10 * 60_000;
/** How often it looks for that answer in the store. */
const ANSWER_POLL_MS = 250;
/** Claims are kept a day (a platform that delivers a command again within that finds it claimed), then forgotten. */
const CLAIMS_KEPT_MS = 24 * 3_600_000;

export interface CommandsDeps {
  readonly rooms: Pick<Rooms, 'get'>;
  readonly calls: Calls;
  readonly log: Logger;
  readonly clock: () => number;
  /** With bridges sharing the store: where commands are claimed, and this bridge's REPLICA_ID. */
  readonly claims?: { readonly port: CommandClaimPort; readonly replica: string } | undefined;
  /** How long to wait for another bridge's answer (default ANSWER_WAIT_MS). */
  readonly answerWaitMs?: number;
}

export class Commands {
  private readonly pause = new Pause();
  private stopped = false;
  private forgotAt = 0;
  /** Commands whose answer another bridge will store, by claim id: each wakes its waiter. */
  private readonly answers = new Map<string, () => void>();

  constructor(private readonly deps: CommandsDeps) {}

  stop(): void {
    this.stopped = true;
    this.pause.stop();
    for (const wake of this.answers.values()) wake();
  }

  /** Another bridge stored the answer of a command claimed here (a signal): it is read now. */
  answered(id: string): void {
    this.answers.get(id)?.();
  }

  /**
   * A command an adapter received: its answer, or undefined when another bridge claimed it first (it answers). One
   * bridge alone, or a command without a platform id, is carried out here at once, with no store call.
   */
  async receive(event: CommandEvent): Promise<string | undefined> {
    const { claims } = this.deps;
    if (!claims || event.id === undefined) return this.here(event);
    const id = `${event.platform}:${event.id}`;
    try {
      const json = JSON.stringify(event);
      if (!(await claims.port.claim(id, event.platform, event.channel, json, claims.replica, this.deps.clock()))) {
        this.deps.log.debug({ command: id }, 'a command another bridge claimed: it answers');
        return undefined;
      }
      return await this.here(event);
    } catch (error) {
      if (!(error instanceof RoomElsewhere)) return this.failed(event, error);
    }
    // Another bridge serves the room: it takes the command from the store, and its answer comes back here.
    try {
      await claims.port.wait(id);
      return await this.answerOf(id, event.name);
    } catch (error) {
      return this.failed(event, error);
    }
  }

  /**
   * Takes the commands other bridges left for the rooms this bridge serves (or nobody does) and carries each out,
   * storing its answer for the bridge that claimed it.
   */
  async takeWaiting(): Promise<void> {
    const { claims } = this.deps;
    if (!claims || this.stopped) return;
    const now = this.deps.clock();
    if (now - this.forgotAt > 3_600_000) {
      this.forgotAt = now;
      await claims.port.forget(now - CLAIMS_KEPT_MS);
    }
    for (const waiting of await claims.port.waiting(claims.replica)) {
      if (!(await claims.port.take(waiting.id))) continue;
      let event: CommandEvent;
      try {
        event = JSON.parse(waiting.event) as CommandEvent;
      } catch (error) {
        this.deps.log.error({ err: error, command: waiting.id }, 'a waiting command is not JSON; answered as failed');
        await claims.port.answer(waiting.id, 'The command could not be read.');
        continue;
      }
      void this.carryOutFor(waiting.id, event);
    }
  }

  private async carryOutFor(id: string, event: CommandEvent): Promise<void> {
    const port = this.deps.claims?.port;
    if (!port) return;
    try {
      let answer: string;
      try {
        answer = await this.here(event);
      } catch (error) {
        if (!(error instanceof RoomElsewhere)) throw error;
        await port.wait(id); // the room moved meanwhile: it waits for its bridge again
        return;
      }
      await port.answer(id, answer);
    } catch (error) {
      this.deps.log.error({ err: error, command: id }, 'a command taken from the store failed');
    }
  }

  /** The answer another bridge stored for a command, waited for (the operator is told when it does not come). */
  private async answerOf(id: string, name: string): Promise<string> {
    const port = this.deps.claims?.port;
    const until = this.deps.clock() + (this.deps.answerWaitMs ?? ANSWER_WAIT_MS);
    try {
      while (port && !this.stopped && this.deps.clock() < until) {
        // Registered before reading: an answer stored after the read wakes the wait at once.
        const signalled = new Promise<void>((resolve) => this.answers.set(id, resolve));
        const answer = await port.answerOf(id);
        if (answer !== undefined) return answer;
        await Promise.race([signalled, this.pause.wait(ANSWER_POLL_MS)]);
      }
    } finally {
      this.answers.delete(id);
    }
    return `/${name} was handed to the bridge serving this room; its answer has not come back yet.`;
  }

  /** Carries a command out in its room, served here; throws RoomElsewhere when another bridge serves it. */
  private async here(event: CommandEvent): Promise<string> {
    const id = randomUUID();
    const answer = this.deps.calls.command(id);
    try {
      const actor = await this.deps.rooms.get(event.platform, event.channel, event.direct?.agent);
      const taken = await actor.deliver({
        type: 'command',
        command: { id, name: event.name, args: event.args, user: event.user.name, isOperator: event.isOperator },
      });
      if (taken === 'held') this.deps.calls.answer(id, `/${event.name} waits: ${HELD_COMMAND}`);
      else if (taken === 'refused')
        this.deps.calls.answer(id, `/${event.name} could not be carried out: ${REFUSED_COMMAND}`);
      else if (taken !== 'done') this.deps.calls.answer(id, `/${event.name} could not be carried out (${taken}).`);
      return redact(await answer);
    } catch (error) {
      this.deps.calls.answer(id, '');
      if (error instanceof RoomElsewhere) throw error;
      return this.failed(event, error);
    }
  }

  private failed(event: CommandEvent, error: unknown): string {
    this.deps.log.error({ err: error, command: event.name }, 'command failed');
    return `/${event.name} failed: ${redact(String(error))}`;
  }
}
