/**
 * Operator commands: each is carried out by the room it is issued in (the room's decision answers it). With bridges
 * sharing the store (replicas), a command that has a platform id is claimed once by that id: a bridge that finds it
 * claimed does nothing (the claiming one answers), and one that claims it for a room another bridge serves leaves it
 * in the store, where the room's bridge takes it, carries it out and stores the answer for the operator. Agents'
 * actions for a room another bridge serves are taken the same way (handed-on.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log.js';
import type { ChatAdapter, CommandEvent } from '../../ports.js';
import type { ActionResult } from '../../room/effects.js';
import { redact } from '../../secrets.js';
import type { WaitingCommand } from '../../store/port.js';
import { traceCommand } from '../../trace/inbound.js';
import type { Calls } from '../executors/calls.js';
import { RoomElsewhere, type Rooms } from '../loop/rooms.js';
import type { HandedAction, Relay } from '../replicas/relay.js';
import type { AccessGate } from './access-gate.js';

const HELD_COMMAND = 'the bridge cannot save to its store right now; it is carried out as soon as it can.';
const REFUSED_COMMAND = 'the bridge cannot save to its store right now, and too much waits already.';

/** Claims are kept a day (a platform that delivers a command again within that finds it claimed), then forgotten. */
const CLAIMS_KEPT_MS = 24 * 3_600_000;

export interface CommandsDeps {
  readonly rooms: Pick<Rooms, 'get'>;
  readonly calls: Calls;
  readonly log: Logger;
  readonly clock: () => number;
  /** With bridges sharing the store: where commands are claimed and handed on. */
  readonly handed?: Relay | undefined;
  /** The adapters by platform: a command whose claimer is gone is answered through its own. */
  readonly adapters?: ReadonlyMap<string, ChatAdapter> | undefined;
  /** `/access` and `/pair` (who may talk to the agents). */
  readonly access?: Pick<AccessGate, 'command'> | undefined;
  /** Whether a replica is live (the registry of replicas): a command's claimer that is not cannot answer it. */
  readonly live?: ((replica: string) => Promise<boolean>) | undefined;
}

export class Commands {
  private stopped = false;
  private forgotAt = 0;

  constructor(private readonly deps: CommandsDeps) {}

  stop(): void {
    this.stopped = true;
  }

  /**
   * A command an adapter received: its answer, or undefined when another bridge claimed it first (it answers). One
   * bridge alone, or a command without a platform id, is carried out here at once, with no store call.
   */
  /** A command as it arrives: it opens its trace, then it is received. */
  arrive(event: CommandEvent): Promise<string | undefined> {
    return traceCommand(event, this.receiveOf);
  }

  private readonly receiveOf = (event: CommandEvent) => this.receive(event);

  async receive(event: CommandEvent): Promise<string | undefined> {
    // Who may talk to the agents is the bridge's, not a room's: any bridge answers (the store holds the pairings).
    if (event.name === 'access' || event.name === 'pair') {
      const gate = this.deps.access;
      if (!gate) return `/${event.name} is not available here.`;
      return gate.command(event).catch((error: unknown) => this.failed(event, error));
    }
    const { handed } = this.deps;
    if (!handed || event.id === undefined) return this.here(event);
    const id = `${event.platform}:${event.id}`;
    try {
      // The reply route is a secret: stored apart from the command, only when it is handed on, until it is answered.
      const { reply: _secret, ...command } = event;
      const json = JSON.stringify(command);
      if (!(await handed.port.claim(id, event.platform, event.channel, json, handed.replica, this.deps.clock()))) {
        this.deps.log.debug({ command: id }, 'a command another bridge claimed: it answers');
        return undefined;
      }
      return await this.here(event);
    } catch (error) {
      if (!(error instanceof RoomElsewhere)) return this.failed(event, error);
    }
    // Another bridge serves the room: it takes the command from the store, and its answer comes back here.
    try {
      const answer = await handed.leave(id, event.reply);
      return answer ?? `/${event.name} was handed to the bridge serving this room; its answer has not come back yet.`;
    } catch (error) {
      return this.failed(event, error);
    }
  }

  /**
   * Takes the commands and agents' actions other bridges left for the rooms this bridge serves (or nobody does) and
   * carries each out, storing its answer for the bridge that left it.
   */
  async takeWaiting(): Promise<void> {
    const { handed } = this.deps;
    if (!handed || this.stopped) return;
    const now = this.deps.clock();
    if (now - this.forgotAt > 3_600_000) {
      this.forgotAt = now;
      await handed.port.forget(now - CLAIMS_KEPT_MS);
    }
    for (const waiting of await handed.port.waiting(handed.replica)) {
      if (!(await handed.port.take(waiting.id))) continue;
      let item: CommandEvent | HandedAction;
      try {
        item = JSON.parse(waiting.event) as CommandEvent | HandedAction;
      } catch (error) {
        this.deps.log.error({ err: error, command: waiting.id }, 'a command left in the store is not JSON');
        await handed.port.answer(waiting.id, 'The command could not be read.');
        continue;
      }
      void this.carryOutFor(waiting.id, item, waiting);
    }
  }

  private async carryOutFor(
    id: string,
    item: CommandEvent | HandedAction,
    claim: Pick<WaitingCommand, 'receivedBy' | 'reply'>,
  ): Promise<void> {
    const port = this.deps.handed?.port;
    if (!port) return;
    try {
      let answer: string;
      try {
        answer =
          'kind' in item && item.kind === 'action'
            ? JSON.stringify(await this.act(item))
            : await this.here(item as CommandEvent);
      } catch (error) {
        if (!(error instanceof RoomElsewhere)) throw error;
        await port.wait(id); // the room moved meanwhile: it waits for its bridge again
        return;
      }
      await port.answer(id, answer);
      if (claim.reply !== null && !('kind' in item)) await this.answerForGone(id, item, claim, answer);
    } catch (error) {
      this.deps.log.error({ err: error, command: id }, 'a command taken from the store failed');
    }
  }

  /** The bridge that claimed a command is gone (not live): its operator is answered from here, through its route. */
  private async answerForGone(
    id: string,
    event: CommandEvent,
    claim: Pick<WaitingCommand, 'receivedBy' | 'reply'>,
    answer: string,
  ): Promise<void> {
    const { live, adapters, log } = this.deps;
    const adapter = adapters?.get(event.platform);
    if (!claim.reply || !live || !adapter?.answerCommand || (await live(claim.receivedBy))) return;
    try {
      await adapter.answerCommand(claim.reply, answer);
      log.info(
        { command: id, claimer: claim.receivedBy },
        "a command's claimer is gone: its operator was answered here",
      );
    } catch (error) {
      // The route's error may carry it (a token in a URL): only its redacted text is logged.
      log.warn(
        { command: id, error: redact(String(error)) },
        "a command's answer could not be given for its gone claimer",
      );
    }
  }

  /** An agent's action another bridge handed on, taken by its room here; its result. */
  private async act(handed: HandedAction): Promise<ActionResult> {
    const actor = await this.deps.rooms.get(handed.platform, handed.channel, handed.direct);
    const { action } = handed;
    const { call } = action;
    const result = this.deps.calls.action(call);
    const taken = await actor.deliver({ type: 'action', action });
    if (taken !== 'done') this.deps.calls.forget(call, `the room could not take the message (${taken})`);
    return result;
  }

  /** Carries a command out in its room, served here; throws RoomElsewhere when another bridge serves it. */
  private async here(event: CommandEvent): Promise<string> {
    const name = event.name;
    if (name === 'access' || name === 'pair') return this.receive(event).then((answer) => answer ?? '');
    const id = randomUUID();
    const answer = this.deps.calls.command(id);
    try {
      const actor = await this.deps.rooms.get(event.platform, event.channel, event.direct?.agent);
      const taken = await actor.deliver({
        type: 'command',
        command: {
          id,
          name,
          args: event.args,
          user: event.user.name,
          userId: event.user.id,
          isOperator: event.isOperator,
          ...(event.fromConsole ? { fromConsole: true } : {}),
          ...(event.trace !== undefined ? { trace: event.trace } : {}),
        },
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
