import type { AgentConfig } from '../config/index.js';
import { describeError } from '../errors.js';
import type { Situation } from '../llm/situation.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';
import { classifyReply, worldPassText } from '../room/turns.js';
import type { ReplyTo, RoomMessage } from '../room/types.js';
import type { HandBack } from './hand-back.js';
import type { LoopGuards } from './loop-guards.js';
import type { Poster } from './poster.js';
import type { Requests } from './requests.js';
import type { Room } from './rooms.js';
import type { TurnResult, TurnRunner } from './turn-runner.js';

/** How a turn ended, from the caller's point of view. */
export type TurnEnd =
  | { readonly kind: 'posted'; readonly message: RoomMessage }
  | { readonly kind: 'passed' }
  | { readonly kind: 'failed' }
  /** Control went to the humans (hand-back): nothing more happens in this round. */
  | { readonly kind: 'ended' };

/**
 * One agent turn and what its result means: a reply is posted (and answers the requests the turn was
 * asked in), a pass posts nothing, a world pass posts the reply and hands back, a failure is one short line.
 */
export class AgentTurns {
  constructor(
    private readonly deps: {
      readonly runner: TurnRunner;
      readonly poster: Poster;
      readonly requests: Requests;
      readonly guards: LoopGuards;
      readonly handBack: HandBack;
      readonly maxToolRounds: number;
      /** A posted reply goes on to the conductor: it may ask, answer, or be routed to the others. */
      readonly afterPost: (room: Room, message: RoomMessage, replyTo: ReplyTo, route: boolean, epoch: number) => void;
      readonly log: Logger;
    },
  ) {}

  /**
   * One agent turn, and what its result means: post, pass, world pass, failure, hand-back. `answered` gives the
   * result instead of running the turn (an answer from a batched call, src/bridge/batch-turns.ts).
   */
  async take(
    room: Room,
    agent: AgentConfig,
    situation: Situation,
    replyTo: ReplyTo,
    route: boolean,
    answered?: () => Promise<TurnResult>,
  ): Promise<TurnEnd> {
    const { poster, requests, log } = this.deps;
    const controlAtStart = room.state.turnState.control;
    const epoch = room.actor.epoch;
    metrics.agentTurns.inc({ agent: agent.name });
    const result = await (answered?.() ?? this.deps.runner.run(room, agent, situation, replyTo));
    const stream = result.stream;
    const cancelStream = () => stream?.cancel().catch(() => {});
    if (result.kind === 'aborted' || result.kind === 'failed') await cancelStream();
    if (result.kind === 'aborted') return { kind: 'passed' }; // `/pass <agent>` skips only this agent
    if (result.kind === 'failed') {
      log.error({ err: result.error, room: room.key, agent: agent.name }, 'agent turn failed');
      this.deps.guards.markFailed(room, agent.name);
      const reason = describeError(result.error);
      for (const id of replyTo.threads) requests.answer(id, agent.name, reason, false, true);
      await poster.system(room, `@${agent.name} could not answer: ${reason}`);
      return { kind: 'failed' };
    }
    // Control went to the humans while it worked (its own messaging actions reached the turn limit, or
    // a deadline hand-back): the reply it was writing is not posted.
    if (controlAtStart === 'agents' && room.state.turnState.control === 'humans') {
      await cancelStream();
      return { kind: 'ended' };
    }
    const outcome = classifyReply(result.text);
    if (outcome.kind === 'pass') {
      await cancelStream();
      log.debug({ room: room.key, agent: agent.name }, 'passed');
      metrics.passes.inc({ agent: agent.name });
      if (result.kind === 'reply') {
        for (const id of replyTo.threads) requests.answer(id, agent.name, '', true);
        return { kind: 'passed' };
      }
    } else {
      const text = outcome.text;
      // A world pass's mentions open no requests: control goes to the humans right after.
      const posted = await poster.agent(room, agent.name, text, {
        toolRuns: result.toolRuns,
        replyTo,
        stream,
        ...(outcome.kind === 'world-pass' || result.kind === 'round-limit' ? { requests: [] } : {}),
      });
      if (posted.kind === 'failed') {
        await this.deps.handBack(
          room,
          'post failed',
          `@${agent.name}'s reply could not be posted: ${describeError(posted.error)}`,
        );
        return { kind: 'ended' };
      }
      if (outcome.kind === 'world-pass') {
        if (posted.kind === 'posted') for (const id of replyTo.threads) requests.answer(id, agent.name, text, false);
        await this.deps.handBack(room, 'world pass', worldPassText(agent.name));
        return { kind: 'ended' };
      }
      if (result.kind === 'reply') {
        if (posted.kind === 'posted') this.deps.afterPost(room, posted.message, replyTo, route, epoch);
        return posted.kind === 'posted' ? posted : { kind: 'passed' };
      }
    }
    await this.deps.handBack(
      room,
      'tool round limit',
      `@${agent.name} stopped after ${this.deps.maxToolRounds} tool rounds; control is back with the humans.`,
    );
    return { kind: 'ended' };
  }
}
