/**
 * BATCHING=on: a round's observers the room asks together (the `ask` effect with several turns) are asked in one
 * structured call on the heartbeat of src/bridge/batch-queue.ts. Each answer goes back to the room in one `batch`
 * event; an observer that wants its tools, or that no batch could take, answers `alone` (the room then asks it on
 * its own).
 */
import type { AgentConfig, Settings } from '../config/index.js';
import type { BatchAgent } from '../llm/batch.js';
import { callBatch, prepareBatch } from '../llm/batch-call.js';
import { renderSituation } from '../llm/situation.js';
import type { TurnServices } from '../llm/turn-context.js';
import type { Logger } from '../log.js';
import type { TurnOrder } from '../room/effects.js';
import type { BatchAnswer } from '../room/events.js';
import { visibleTo } from '../room/privacy.js';
import type { RoomStore } from '../store/port.js';
import type { LlmFactory } from './agent-runner.js';
import { BatchQueue, type QueuedTurn } from './batch-queue.js';
import type { RoomActor } from './room-actor.js';

interface Queued extends QueuedTurn {
  readonly actor: RoomActor;
  readonly agent: AgentConfig;
  readonly ask: number;
  readonly transcript: string;
  readonly segment: BatchAgent;
  settle(answer: BatchAnswer): void;
}

export interface BatchTurnsDeps {
  readonly agents: readonly AgentConfig[];
  readonly llm: LlmFactory;
  readonly rooms: Pick<RoomStore, 'history'>;
  readonly window: number;
  readonly settings: Pick<Settings, 'BATCH_TICK_MS' | 'BATCH_RESERVE_TOKENS' | 'HISTORY_LIMIT' | 'ANSWER_RESERVE_TOKENS'>;
  readonly sources?: TurnServices | undefined;
  readonly notes: (agent: AgentConfig) => Promise<string>;
  readonly log: Logger;
  /** The heartbeat (tests drive it by hand). */
  readonly every?: ((ms: number, tick: () => void) => () => void) | undefined;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

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
      alone: (turn) => turn.settle({ kind: 'alone' }),
      drop: (turn) => turn.settle({ kind: 'alone' }),
      every: deps.every,
    });
  }

  /** Asks these observers together; their answers go back to the room as one `batch` event. */
  start(actor: RoomActor, orders: readonly TurnOrder[]): void {
    const controller = new AbortController();
    const key = `${actor.key}#${orders[0]?.ask.id}`;
    this.calls.set(key, controller);
    void this.answers(actor, orders, controller.signal).then((answers) => {
      this.calls.delete(key);
      if (this.stopped) return;
      void actor.deliver({ type: 'batch', answers }, { urgent: true });
    });
  }

  /** Stops a batched call (its observers then answer `alone`, and the room decides what follows). */
  stop(room: string, ask: number): void {
    this.calls.get(`${room}#${ask}`)?.abort();
  }

  stopAll(): void {
    this.stopped = true;
    this.queue.stop();
    for (const call of this.calls.values()) call.abort();
  }

  private async answers(
    actor: RoomActor,
    orders: readonly TurnOrder[],
    signal: AbortSignal,
  ): Promise<Array<{ ask: number; answer: BatchAnswer }>> {
    const alone = orders.map((o) => ({ ask: o.ask.id, answer: { kind: 'alone' } as BatchAnswer }));
    const members = orders.flatMap((order) => {
      const agent = this.deps.agents.find((a) => same(a.name, order.ask.agent));
      return agent ? [{ agent, order }] : [];
    });
    const first = members[0];
    if (!first) return alone;
    try {
      const history = visibleTo(first.agent.name, await this.deps.rooms.history(actor.record.id, this.deps.window));
      const prepared = await prepareBatch({
        members: await Promise.all(
          members.map(async ({ agent }) => ({ agent, situation: await this.situation(agent) })),
        ),
        agentNames: this.deps.agents.map((a) => a.name),
        history,
        roomKey: actor.key,
        settings: this.deps.settings,
        sources: this.deps.sources,
      });
      const settled = prepared.members.map((member) => {
        const order = members.find((m) => m.agent === member.agent)?.order;
        let settle: (answer: BatchAnswer) => void = () => {};
        const answer = new Promise<BatchAnswer>((resolve) => {
          settle = resolve;
        });
        const turn: Queued = {
          actor,
          agent: member.agent,
          ask: order?.ask.id ?? 0,
          group: actor.key,
          contextTokens: member.agent.contextTokens,
          sharedTokens: prepared.sharedTokens,
          segmentTokens: member.tokens,
          transcript: prepared.transcript,
          segment: member.segment,
          wanted: () => !signal.aborted,
          settle,
        };
        return { turn, answer };
      });
      this.queue.submit(settled.map((s) => s.turn));
      const answers = await Promise.all(settled.map(async (s) => ({ ask: s.turn.ask, answer: await s.answer })));
      return alone.map((a) => answers.find((b) => b.ask === a.ask) ?? a);
    } catch (error) {
      this.deps.log.warn({ err: error, room: actor.key }, 'could not prepare a batch: each agent is asked on its own');
      return alone;
    }
  }

  /** What an observer reads about why it is asked, as its own turn would show it. */
  private async situation(agent: AgentConfig): Promise<string> {
    return [renderSituation({ kind: 'observe' }, agent.prompts), await this.deps.notes(agent)]
      .filter(Boolean)
      .join('\n\n');
  }

  /** One call for `batch`; each turn settles with its answer, or `alone` when the answer cannot be used. */
  private async send(batch: Queued[]): Promise<void> {
    const [first] = batch;
    if (!first) return;
    const { actor } = first;
    const { log } = this.deps;
    const temperatures = new Set(batch.map((t) => t.agent.temperature));
    try {
      for (const turn of batch) void actor.adapter.typing?.(actor.record.channel, turn.agent.name)?.catch(() => {});
      const answer = await callBatch({
        client: this.deps.llm(first.agent),
        model: first.agent.model,
        temperature: temperatures.size === 1 ? first.agent.temperature : undefined,
        transcript: first.transcript,
        agents: batch.map((t) => t.segment),
        sharedTokens: first.sharedTokens,
        segmentTokens: batch.map((t) => t.segmentTokens),
        onUsage: (agent, usage) => this.deps.sources?.recordUsage?.(agent, actor.key, usage),
        log,
      });
      if (!answer.ok) {
        log.warn(
          { room: actor.key, agents: batch.map((t) => t.agent.name), reason: answer.reason },
          'batch answer rejected: each agent is asked on its own',
        );
      }
      for (const turn of batch) {
        const reply = answer.ok ? answer.replies.get(turn.agent.name) : undefined;
        if (!reply || reply.kind === 'tools') turn.settle({ kind: 'alone' });
        else turn.settle({ kind: 'reply', text: reply.kind === 'reply' ? reply.text : '[pass]' });
      }
    } catch (error) {
      log.warn({ err: error, room: actor.key }, 'batch call failed: each agent is asked on its own');
      for (const turn of batch) turn.settle({ kind: 'alone' });
    }
  }
}
