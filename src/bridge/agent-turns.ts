import type { AgentConfig } from '../config/index.js';
import { describeError } from '../errors.js';
import type { Situation } from '../llm/situation.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';
import { interruptedLine, resumeNote, tooOftenCutLine } from '../room/recovery.js';
import { classifyReply, worldPassText } from '../room/turns.js';
import type { ReplyTo, RoomMessage } from '../room/types.js';
import type { JournalStore, OutboxEntry, ToolRunRow, TurnOutcome, WorkRow } from '../store/index.js';
import type { HandBack } from './hand-back.js';
import type { LoopGuards } from './loop-guards.js';
import type { Poster, PostMeta, ReplyAfter } from './poster.js';
import type { Requests } from './requests.js';
import type { Room } from './rooms.js';
import type { TurnResult, TurnRunner } from './turn-runner.js';

/** How a turn ended, from the caller's point of view. */
export type TurnEnd =
  | { readonly kind: 'posted'; readonly message?: RoomMessage }
  | { readonly kind: 'passed' }
  | { readonly kind: 'failed' }
  /** Control went to the humans (hand-back): nothing more happens in this round. */
  | { readonly kind: 'ended' };

/** One turn to take: what names it (the same turn is never taken twice), what woke it, what it answers. */
export interface TurnOrder {
  /** `round:<id>/<agent>`, `thread:<id>/<agent>`, `resume:<id>`: unique in its room. */
  readonly key: string;
  /** The round it belongs to, if any. */
  readonly round?: number | undefined;
  readonly situation: Situation;
  readonly replyTo: ReplyTo;
  /** Whether its reply is plain talk the others may answer (false when it was asked). */
  readonly route: boolean;
  /** Gives the result instead of running the turn (an answer from a batched call, src/bridge/batch-turns.ts). */
  readonly answered?: (() => Promise<TurnResult>) | undefined;
}

/** What the journal keeps of a turn, to finish its reply the same way after a restart. */
interface TurnFrame {
  readonly replyTo: ReplyTo;
  readonly route: boolean;
}

/** A turn cut by restarts this many times is not tried again (the room is told). */
export const MAX_TURN_ATTEMPTS = 3;

/**
 * One agent turn and what its result means: a reply is posted (and answers the requests the turn was
 * asked in), a pass posts nothing, a world pass posts the reply and hands back, a failure is one short line.
 * Each turn is journaled: a turn a crash cut is resumed once, its tool runs answered from the record.
 */
export class AgentTurns {
  constructor(
    private readonly deps: {
      readonly runner: TurnRunner;
      readonly poster: Poster;
      readonly requests: Requests;
      readonly guards: LoopGuards;
      readonly handBack: HandBack;
      readonly journal: JournalStore;
      readonly transaction: <T>(work: () => T) => T;
      readonly maxToolRounds: number;
      /** A posted reply goes on to the conductor: it may ask, answer, or be routed to the others. */
      readonly afterPost: (room: Room, message: RoomMessage, replyTo: ReplyTo, route: boolean, epoch: number) => void;
      readonly clock: () => number;
      readonly log: Logger;
    },
  ) {}

  /** One agent turn, once: a turn already taken (before a restart) is not taken again. */
  async take(room: Room, agent: AgentConfig, order: TurnOrder): Promise<TurnEnd> {
    const { journal, poster } = this.deps;
    const frame: TurnFrame = { replyTo: order.replyTo, route: order.route };
    const turn = journal.beginTurn({
      room: room.key,
      key: order.key,
      agent: agent.name,
      parentId: order.round ?? null,
      frame,
      now: this.deps.clock(),
    });
    if (turn.status !== 'open') return { kind: turn.outcome ?? 'passed' } as TurnEnd;
    if (turn.attempts > MAX_TURN_ATTEMPTS) {
      journal.finish(turn.id, 'dropped', 'failed');
      await poster.system(room, tooOftenCutLine(agent.name, turn.attempts - 1));
      return { kind: 'failed' };
    }
    const earlier = turn.attempts > 1 ? journal.toolRuns(turn.id) : [];
    if (earlier.length > 0) await poster.system(room, interruptedLine(agent.name, earlier));
    const end = await this.run(room, agent, order, turn, earlier);
    if (end.kind !== 'aborted') journal.finish(turn.id, 'done', end.kind);
    return end.kind === 'aborted' ? { kind: 'passed' } : end;
  }

  /**
   * Sends a post a restart left unsent; a turn's reply then means what it would have meant (it answers,
   * is routed, or hands back) and finishes its turn.
   */
  async resend(room: Room, entry: OutboxEntry): Promise<void> {
    const turn = entry.workId !== null ? this.deps.journal.get(entry.workId) : undefined;
    const frame = turn?.frame as TurnFrame | null | undefined;
    if (entry.purpose !== 'reply' || !turn || !frame || !entry.agent) {
      await this.deps.poster.resend(room, entry);
      return;
    }
    const after = ((entry.meta ?? {}) as PostMeta).after ?? 'route';
    const agent = entry.agent;
    let follow: Promise<TurnEnd> | undefined;
    const posted = await this.deps.poster.resend(room, entry, (message) => {
      follow = this.settle(room, agent, turn, message, frame, room.actor.epoch, after);
    });
    if (posted.kind === 'failed') {
      this.deps.journal.finish(turn.id, 'done', 'ended');
      await this.deps.handBack(
        room,
        'post failed',
        `@${agent}'s reply could not be posted: ${describeError(posted.error)}`,
      );
      return;
    }
    await follow;
  }

  private async run(
    room: Room,
    agent: AgentConfig,
    order: TurnOrder,
    turn: WorkRow,
    earlier: readonly ToolRunRow[],
  ): Promise<TurnEnd | { readonly kind: 'aborted' }> {
    const { poster, requests, log } = this.deps;
    const { replyTo } = order;
    const controlAtStart = room.state.turnState.control;
    const epoch = room.actor.epoch;
    metrics.agentTurns.inc({ agent: agent.name });
    // A batched call may have answered already (src/bridge/batch-turns.ts): its answer is the result.
    const result = await (order.answered?.() ??
      this.deps.runner.run(room, agent, order.situation, replyTo, {
        work: turn.id,
        replay: earlier,
        ...(turn.attempts > 1 ? { note: resumeNote(earlier) } : {}),
      }));
    const stream = result.stream;
    const cancelStream = () => stream?.cancel().catch(() => {});
    if (result.kind === 'aborted' || result.kind === 'failed') await cancelStream();
    // `/pass <agent>` skips only this agent; a shutdown leaves the turn open, to be resumed after the restart.
    if (result.kind === 'aborted') return { kind: 'aborted' };
    if (result.kind === 'failed') {
      log.error({ err: result.error, room: room.key, agent: agent.name }, 'agent turn failed');
      this.deps.guards.markFailed(room, agent.name);
      const reason = describeError(result.error);
      this.deps.transaction(() => {
        for (const id of replyTo.threads) requests.answer(id, agent.name, reason, false, true);
        this.deps.journal.finish(turn.id, 'done', 'failed');
      });
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
    if (outcome.kind === 'pass' && result.kind === 'reply') {
      await cancelStream();
      log.debug({ room: room.key, agent: agent.name }, 'passed');
      metrics.passes.inc({ agent: agent.name });
      this.deps.transaction(() => {
        for (const id of replyTo.threads) requests.answer(id, agent.name, '', true);
        this.deps.journal.finish(turn.id, 'done', 'passed');
      });
      return { kind: 'passed' };
    }
    const after: ReplyAfter =
      outcome.kind === 'world-pass' ? 'world-pass' : result.kind === 'round-limit' ? 'round-limit' : 'route';
    if (outcome.kind === 'pass') {
      await cancelStream();
      return this.settle(room, agent.name, turn, undefined, order, epoch, after);
    }
    let follow: Promise<TurnEnd> | undefined;
    // A world pass's mentions open no requests: control goes to the humans right after.
    const posted = await poster.agent(room, agent.name, outcome.text, {
      toolRuns: result.toolRuns,
      replyTo,
      stream,
      turn: { id: turn.id, after },
      ...(after !== 'route' ? { requests: [] } : {}),
      recorded: (message) => {
        follow = this.settle(room, agent.name, turn, message, order, epoch, after);
      },
    });
    if (posted.kind === 'failed') {
      this.deps.journal.finish(turn.id, 'done', 'ended');
      await this.deps.handBack(
        room,
        'post failed',
        `@${agent.name}'s reply could not be posted: ${describeError(posted.error)}`,
      );
      return { kind: 'ended' };
    }
    // Nothing was left to post (a bare world pass): what follows the reply still follows.
    return follow ?? this.settle(room, agent.name, turn, undefined, order, epoch, after);
  }

  /**
   * What a reply means once recorded (called inside the recording transaction, so the turn's end and the
   * answers it gives are stored with the message): it answers and is routed, or it hands control back.
   */
  private settle(
    room: Room,
    agent: string,
    turn: WorkRow,
    message: RoomMessage | undefined,
    frame: TurnFrame,
    epoch: number,
    after: ReplyAfter,
  ): Promise<TurnEnd> {
    const { journal, requests } = this.deps;
    const outcome: TurnOutcome = after !== 'route' ? 'ended' : message ? 'posted' : 'passed';
    journal.finish(turn.id, 'done', outcome);
    if (after === 'route') {
      if (message) this.deps.afterPost(room, message, frame.replyTo, frame.route, epoch);
      return Promise.resolve(message ? { kind: 'posted', message } : { kind: 'passed' });
    }
    if (after === 'world-pass') {
      if (message) for (const id of frame.replyTo.threads) requests.answer(id, agent, message.content, false);
      return this.deps.handBack(room, 'world pass', worldPassText(agent)).then(() => ({ kind: 'ended' }) as const);
    }
    const limit = this.deps.maxToolRounds;
    const line = `@${agent} stopped after ${limit} tool rounds; control is back with the humans.`;
    return this.deps.handBack(room, 'tool round limit', line).then(() => ({ kind: 'ended' }) as const);
  }
}
