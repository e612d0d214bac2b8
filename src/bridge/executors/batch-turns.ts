/**
 * BATCHING=on: a round's observers the room asks together (the `ask` effect with several turns) are asked in one
 * structured call on the heartbeat of batch-queue.ts. Each answer goes back to the room in one `batch`
 * event; an observer that wants its tools, or that no batch could take, answers `alone` (the room then asks it on
 * its own).
 */
import type { AgentConfig, Settings } from '../../config/index.js';
import type { BatchAgent, BatchSeat } from '../../llm/batch.js';
import { batchRoster, callBatch, prepareBatch } from '../../llm/batch-call.js';
import type { LlmFactory } from '../../llm/llm-factory.js';
import { renderSituation } from '../../llm/situation.js';
import type { TurnServices } from '../../llm/turn-context.js';
import type { Logger } from '../../log.js';
import type { TurnOrder } from '../../room/effects.js';
import type { BatchAnswer } from '../../room/events.js';
import { seeingAlike, visibleTo } from '../../room/privacy.js';
import type { SpendMeter } from '../../spend/meter.js';
import type { RoomStore } from '../../store/port.js';
import { traceBatch } from '../../trace/batch.js';
import type { RoomHandle } from '../loop/room-handle.js';
import { BatchQueue, type QueuedTurn } from './batch-queue.js';
import type { PrivateChats } from './private-chats.js';

interface Queued extends QueuedTurn {
  readonly room: RoomHandle;
  readonly agent: AgentConfig;
  readonly ask: number;
  /** The trace its ask carries (the message that woke it). */
  readonly trace?: string | undefined;
  readonly transcript: string;
  readonly seats: readonly BatchSeat[];
  readonly segment: BatchAgent;
  /** Resolves once the room has taken the answer. */
  settle(answer: BatchAnswer): Promise<void>;
}

export interface BatchTurnsDeps {
  readonly agents: readonly AgentConfig[];
  readonly llm: LlmFactory;
  readonly rooms: Pick<RoomStore, 'history'>;
  readonly window: number;
  readonly settings: Pick<
    Settings,
    'BATCH_TICK_MS' | 'BATCH_RESERVE_TOKENS' | 'HISTORY_LIMIT' | 'ANSWER_RESERVE_TOKENS'
  >;
  readonly sources?: TurnServices | undefined;
  /** Lines an agent reads at the start of a turn (its pending chat requests, how its requests ended). */
  readonly chats: Pick<PrivateChats, 'briefing'>;
  readonly log: Logger;
  /** The heartbeat (tests drive it by hand). */
  readonly every?: ((ms: number, tick: () => void) => () => void) | undefined;
  /** Spending limits on a batched call (each agent pays its share). */
  readonly spend?: Pick<SpendMeter, 'forBatch'> | undefined;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const ALONE: BatchAnswer = { kind: 'alone' };

export class BatchTurns {
  private readonly queue: BatchQueue<Queued>;
  /** Calls under way, by room and first ask, so a stop withdraws them. */
  private readonly calls = new Map<string, AbortController>();
  private stopped = false;

  constructor(private readonly deps: BatchTurnsDeps) {
    this.queue = new BatchQueue({
      tickMs: deps.settings.BATCH_TICK_MS,
      reserve: deps.settings.BATCH_RESERVE_TOKENS,
      send: (batch) => this.send(batch),
      alone: (turn) => void turn.settle({ kind: 'alone' }),
      drop: (turn) => void turn.settle({ kind: 'alone' }),
      every: deps.every,
    });
  }

  /**
   * Asks these observers together. Observers that see the room alike share calls (under privacy some may not); each
   * answer goes to the room as soon as its call is answered, and one that no batch can take answers `alone`.
   */
  start(room: RoomHandle, orders: readonly TurnOrder[]): void {
    const controller = new AbortController();
    const key = `${room.key}#${orders[0]?.ask.id}`;
    this.calls.set(key, controller);
    const left = new Set(orders.map((order) => order.ask.id));
    // Resolves once the room has taken the answer (so a round it ends withdraws the rest before the next tick).
    const answer = async (ask: number, value: BatchAnswer): Promise<void> => {
      if (!left.delete(ask)) return;
      if (left.size === 0 && this.calls.get(key) === controller) this.calls.delete(key);
      if (this.stopped || controller.signal.aborted) return;
      await room.report({ type: 'batch', answers: [{ ask, answer: value }] });
    };
    void this.queueTurns(room, orders, controller.signal, answer);
  }

  /** Withdraws a batched call's observers still waiting (the round ended, a human spoke, an operator stopped it). */
  stop(room: string, ask: number): void {
    const key = `${room}#${ask}`;
    this.calls.get(key)?.abort();
    this.calls.delete(key);
  }

  stopAll(): void {
    this.stopped = true;
    this.queue.stop();
    for (const call of this.calls.values()) call.abort();
  }

  private async queueTurns(
    room: RoomHandle,
    orders: readonly TurnOrder[],
    signal: AbortSignal,
    answer: (ask: number, value: BatchAnswer) => Promise<void>,
  ): Promise<void> {
    const members = orders.flatMap((order) => {
      const agent = this.deps.agents.find((a) => same(a.name, order.ask.agent));
      return agent ? [{ agent, ask: order.ask.id, trace: order.ask.trace }] : [];
    });
    for (const order of orders) if (!members.some((m) => m.ask === order.ask.id)) void answer(order.ask.id, ALONE);
    try {
      const history = await this.deps.rooms.history(room.id, this.deps.window);
      // Who may share a call is the room's rule: those who see the same messages of the room.
      for (const group of seeingAlike(members, (member) => member.agent.name, history)) {
        const [first] = group;
        if (!first || group.length < 2) {
          for (const member of group) void answer(member.ask, ALONE);
          continue;
        }
        const prepared = await prepareBatch({
          members: await Promise.all(
            group.map(async ({ agent }) => ({ agent, situation: await this.situation(agent) })),
          ),
          roster: batchRoster(this.deps.agents, first.agent),
          agentNames: this.deps.agents.map((a) => a.name),
          history: visibleTo(first.agent.name, history),
          // Batches take public exchanges only (rule 14.1): the exchange's audience is the first ask's, null.
          place: { room: room.key, audience: orders[0]?.ask.audience ?? null },
          roomId: room.id,
          settings: this.deps.settings,
          sources: this.deps.sources,
        });
        for (const member of group) {
          if (!prepared.members.some((p) => p.agent === member.agent)) void answer(member.ask, ALONE);
        }
        const turns = prepared.members.map((member) => {
          const seat = group.find((m) => m.agent === member.agent);
          const ask = seat?.ask ?? 0;
          let done = false;
          const turn: Queued = {
            room,
            agent: member.agent,
            ask,
            trace: seat?.trace,
            group: `${room.key}\n${first.ask}`,
            contextTokens: member.agent.contextTokens,
            sharedTokens: prepared.sharedTokens,
            segmentTokens: member.tokens,
            transcript: prepared.transcript,
            seats: prepared.seats,
            segment: member.segment,
            wanted: () => !signal.aborted && !done,
            settle: (value) => {
              if (done) return Promise.resolve();
              done = true;
              return answer(ask, value);
            },
          };
          return turn;
        });
        this.queue.submit(turns);
      }
    } catch (error) {
      this.deps.log.warn({ err: error, room: room.key }, 'could not prepare a batch: each agent is asked on its own');
      for (const member of members) void answer(member.ask, ALONE);
    }
  }

  /** What an observer reads about why it is asked, as its own turn would show it. */
  private async situation(agent: AgentConfig): Promise<string> {
    return [renderSituation({ kind: 'observe' }, agent.prompts), await this.deps.chats.briefing(agent)]
      .filter(Boolean)
      .join('\n\n');
  }

  /** One call for `batch`; each turn settles with its answer, or `alone` when the answer cannot be used. */
  private async send(batch: Queued[]): Promise<void> {
    const [first] = batch;
    if (!first) return;
    const { room } = first;
    const { log } = this.deps;
    const temperatures = new Set(batch.map((t) => t.agent.temperature));
    const traced = traceBatch(
      room.key,
      first.agent,
      batch.map((t) => ({ agent: t.agent.name, ask: t.ask, trace: t.trace })),
    );
    const outcomes = new Map<string, string>();
    try {
      for (const turn of batch) void room.adapter.typing?.(room.channel, turn.agent.name)?.catch(() => {});
      const answer = await callBatch({
        client: this.deps.llm(first.agent),
        model: first.agent.model,
        temperature: temperatures.size === 1 ? first.agent.temperature : undefined,
        transcript: first.transcript,
        seats: first.seats,
        agents: batch.map((t) => t.segment),
        sharedTokens: first.sharedTokens,
        segmentTokens: batch.map((t) => t.segmentTokens),
        onUsage: (agent, usage) => {
          traced?.usage(agent, usage);
          this.deps.sources?.recordUsage?.(agent, room.key, usage);
        },
        log,
        maxOutputTokens: batch.reduce((sum, t) => sum + t.agent.maxOutputTokens, 0),
        meter: this.deps.spend?.forBatch(
          batch.map((t) => ({ agent: t.agent, weight: first.sharedTokens / batch.length + t.segmentTokens })),
          room.key,
        ),
      });
      if (!answer.ok) {
        log.warn(
          { room: room.key, agents: batch.map((t) => t.agent.name), reason: answer.reason },
          'batch answer rejected: each agent is asked on its own',
        );
      }
      const settled = batch.map((turn) => {
        const reply = answer.ok ? answer.replies.get(turn.agent.name) : undefined;
        const value: BatchAnswer =
          !reply || reply.kind === 'tools'
            ? ALONE
            : reply.kind === 'reply'
              ? { kind: 'reply', text: reply.text }
              : { kind: 'pass' };
        outcomes.set(turn.agent.name, value.kind);
        return turn.settle(value);
      });
      // The span ends before the answers reach the room: the replies' posts hang below it.
      traced?.end(outcomes);
      await Promise.all(settled);
    } catch (error) {
      if (outcomes.size === 0) traced?.end(outcomes, error);
      log.warn({ err: error, room: room.key }, 'batch call failed: each agent is asked on its own');
      await Promise.all(batch.map((turn) => turn.settle({ kind: 'alone' })));
    }
  }
}
