import type { AgentConfig, Settings } from '../config/index.js';
import type { BatchAgent, BatchReply } from '../llm/batch.js';
import { callBatch, prepareBatch } from '../llm/batch-call.js';
import { renderSituation, type Situation } from '../llm/situation.js';
import type { TurnServices } from '../llm/turn-context.js';
import type { Logger } from '../log.js';
import { visibleTo } from '../room/privacy.js';
import type { Wake } from '../room/routing.js';
import type { RoomMessage } from '../room/types.js';
import type { LlmFactory } from './agent-runner.js';
import type { AgentTurns, TurnEnd, TurnOrder } from './agent-turns.js';
import { BatchQueue, type QueuedTurn } from './batch-queue.js';
import type { LoopGuards } from './loop-guards.js';
import { PRIVATE_PLATFORM } from './private-rooms.js';
import type { Room } from './rooms.js';

/** What the conductor asks of a round's turns. */
export type TakeTurn = Pick<AgentTurns, 'take'>;

type Outcome =
  | { readonly kind: 'answer'; readonly reply: BatchReply }
  /** Asked on its own: a lone agent, one that fits no batch, a rejected answer, a failed call. */
  | { readonly kind: 'alone' }
  /** Its turn was withdrawn meanwhile (stopped, a human spoke, the round ended): nothing is applied. */
  | { readonly kind: 'withdrawn' };

interface BatchedTurn extends QueuedTurn {
  readonly room: Room;
  readonly agent: AgentConfig;
  readonly transcript: string;
  readonly segment: BatchAgent;
  /** The history it was asked about (message ids it could see). */
  readonly seen: string;
  /** Aborted by /pass, /reset and shutdown, like a turn of its own (it is in the room's in-flight turns). */
  readonly controller: AbortController;
  readonly outcome: Promise<Outcome>;
  settle(outcome: Outcome): void;
}

const lower = (name: string) => name.toLowerCase();
const seenBy = (agent: string, history: readonly RoomMessage[]) =>
  visibleTo(agent, history)
    .map((m) => m.id)
    .join(',');

export interface BatchTurnsDeps {
  readonly agents: readonly AgentConfig[];
  readonly turns: AgentTurns;
  readonly guards: LoopGuards;
  readonly llm: LlmFactory;
  readonly settings: Pick<
    Settings,
    'BATCH_TICK_MS' | 'BATCH_RESERVE_TOKENS' | 'HISTORY_LIMIT' | 'ANSWER_RESERVE_TOKENS'
  >;
  /** Knowledge, recent actions, retrieval, and where usage goes. */
  readonly sources?: TurnServices | undefined;
  /** Lines the agent reads at the start of a turn (pending chat requests). */
  readonly notes: (agent: AgentConfig) => string;
  readonly log: Logger;
  /** The heartbeat (tests drive it by hand). */
  readonly every?: ((ms: number, tick: () => void) => () => void) | undefined;
}

/**
 * BATCHING=on: the agents of a round's observe phase (woken as `always` or `mentioned`, all asked about the same
 * message and seeing the same room) are asked in one structured call per endpoint and model, on the heartbeat of
 * src/bridge/batch-queue.ts; the answers are applied in configured order by the usual turn logic. Everything
 * else — asked agents, request_reply participants, DMs, private chats and private exchanges — takes its turns
 * exactly as without batching.
 */
export class BatchTurns {
  private readonly queue: BatchQueue<BatchedTurn>;

  constructor(private readonly deps: BatchTurnsDeps) {
    this.queue = new BatchQueue({
      tickMs: deps.settings.BATCH_TICK_MS,
      reserve: deps.settings.BATCH_RESERVE_TOKENS,
      send: (batch) => this.send(batch),
      alone: (turn) => turn.settle({ kind: 'alone' }),
      drop: (turn) => turn.settle({ kind: 'withdrawn' }),
      every: deps.every,
    });
  }

  stop(): void {
    this.queue.stop();
  }

  /** The turns of a round woken by `message`: its observe phase batched, every other turn as before. */
  round(room: Room, message: RoomMessage, plan: readonly Wake[]): TakeTurn {
    const { row } = room.state;
    // Never batched: a DM, a private chat between agents, a private exchange (its audience).
    if (row.directAgent || row.platform === PRIVATE_PLATFORM || message.audience) return this.deps.turns;
    const observers = plan.filter((w) => w.reason === 'always' || w.reason === 'mentioned').map((w) => w.agent);
    // One observer is asked on its own, at once: batching never delays a lone turn.
    if (observers.length < 2) return this.deps.turns;
    return new ObservePhase(room, observers, this.deps.turns, (names, open) => this.queueTurns(room, names, open));
  }

  /**
   * Queues the observers `names` (in configured order), grouped by who can share a call: the same endpoint, model
   * and key, and the same view of the room. The queue sends an agent alone in its group on its own, at once.
   */
  private async queueTurns(
    room: Room,
    names: readonly string[],
    open: () => boolean,
  ): Promise<Map<string, BatchedTurn>> {
    const { agents, guards, settings, sources, log } = this.deps;
    const history = room.state.history();
    const groups = new Map<string, { agents: AgentConfig[]; seen: string }>();
    for (const name of names) {
      const agent = agents.find((a) => lower(a.name) === lower(name));
      if (!agent || guards.failedThisRound(room, agent.name)) continue;
      const seen = seenBy(agent.name, history);
      // The key stays in memory (it decides who may share a call) and is never logged.
      const group = [agent.endpoint, agent.model, agent.apiKey ?? '', room.key, seen].join('\n');
      const entry = groups.get(group) ?? { agents: [], seen };
      entry.agents.push(agent);
      groups.set(group, entry);
    }
    const queued = new Map<string, BatchedTurn>();
    for (const [group, entry] of groups) {
      try {
        const prepared = await prepareBatch({
          members: entry.agents.map((agent) => ({ agent, situation: this.situation(agent) })),
          agentNames: agents.map((a) => a.name),
          history: visibleTo(entry.agents[0]?.name ?? '', history),
          roomKey: room.key,
          settings,
          sources,
        });
        const turns = prepared.members.map((member) =>
          this.turn(room, member.agent, {
            group,
            seen: entry.seen,
            transcript: prepared.transcript,
            segment: member.segment,
            sharedTokens: prepared.sharedTokens,
            segmentTokens: member.tokens,
            open,
          }),
        );
        for (const turn of turns) queued.set(lower(turn.agent.name), turn);
        this.queue.submit(turns);
      } catch (error) {
        log.warn({ err: error, room: room.key }, 'could not prepare a batch: each agent is asked on its own');
      }
    }
    return queued;
  }

  /** What an observer reads about why it is asked, as its own turn would show it. */
  private situation(agent: AgentConfig): string {
    const observe: Situation = { kind: 'observe' };
    return [renderSituation(observe, agent.prompts), this.deps.notes(agent)].filter(Boolean).join('\n\n');
  }

  private turn(
    room: Room,
    agent: AgentConfig,
    parts: Pick<BatchedTurn, 'group' | 'seen' | 'transcript' | 'segment' | 'sharedTokens' | 'segmentTokens'> & {
      readonly open: () => boolean;
    },
  ): BatchedTurn {
    const controller = new AbortController();
    let settled = false;
    let resolve: (outcome: Outcome) => void = () => {};
    const outcome = new Promise<Outcome>((done) => {
      resolve = done;
    });
    const turn: BatchedTurn = {
      ...parts,
      room,
      agent,
      contextTokens: agent.contextTokens,
      controller,
      outcome,
      wanted: () => !settled && !controller.signal.aborted && parts.open(),
      settle: (result) => {
        if (settled) return;
        settled = true;
        if (room.actor.inFlight.get(agent.name) === controller) room.actor.inFlight.delete(agent.name);
        resolve(result);
      },
    };
    room.actor.inFlight.set(agent.name, controller);
    controller.signal.addEventListener('abort', () => turn.settle({ kind: 'withdrawn' }), { once: true });
    return turn;
  }

  /** One call for `batch`; each turn settles with its answer, or on its own when the answer cannot be used. */
  private async send(batch: BatchedTurn[]): Promise<void> {
    const [first] = batch;
    if (!first) return;
    const { room } = first;
    const { log } = this.deps;
    const names = batch.map((t) => t.agent.name);
    // The call is given up only when every turn in it was withdrawn.
    const call = new AbortController();
    const temperatures = new Set(batch.map((t) => t.agent.temperature));
    try {
      for (const turn of batch) {
        turn.controller.signal.addEventListener(
          'abort',
          () => batch.every((t) => t.controller.signal.aborted) && call.abort(),
          { once: true },
        );
        void room.adapter.typing?.(room.state.row.channel, turn.agent.name)?.catch(() => {});
      }
      const answer = await callBatch({
        client: this.deps.llm(first.agent),
        model: first.agent.model,
        temperature: temperatures.size === 1 ? first.agent.temperature : undefined,
        transcript: first.transcript,
        agents: batch.map((t) => t.segment),
        sharedTokens: first.sharedTokens,
        segmentTokens: batch.map((t) => t.segmentTokens),
        signal: call.signal,
        onUsage: (agent, usage) => this.deps.sources?.recordUsage?.(agent, room.key, usage),
        log,
      });
      if (!answer.ok) {
        log.warn(
          { room: room.key, agents: names, reason: answer.reason },
          'batch answer rejected: each agent is asked on its own',
        );
      }
      for (const turn of batch) {
        const reply = answer.ok ? answer.replies.get(turn.agent.name) : undefined;
        if (turn.controller.signal.aborted) {
          log.debug({ room: room.key, agent: turn.agent.name }, 'batched answer skipped: the turn was withdrawn');
        }
        turn.settle(reply ? { kind: 'answer', reply } : { kind: 'alone' });
      }
    } catch (error) {
      if (!call.signal.aborted) {
        log.warn({ err: error, room: room.key, agents: names }, 'batch call failed: each agent is asked on its own');
      }
      for (const turn of batch) turn.settle({ kind: 'alone' });
    }
  }
}

/**
 * One round's observe phase. Its first observer's turn queues them all (by then the asked agents have answered,
 * so every observer sees the same room); each observer's turn then applies its answer in configured order, as
 * its own turn would have: a pass is skipped, the first reply is posted and ends the round, [tools] or an
 * unusable answer takes a full turn of its own. Answers after the first reply are dropped, as those agents would
 * not have been asked.
 */
class ObservePhase implements TakeTurn {
  private readonly epoch: number;
  private queued: Promise<Map<string, BatchedTurn>> | undefined;
  private done = false;

  constructor(
    private readonly room: Room,
    private readonly observers: readonly string[],
    private readonly turns: AgentTurns,
    private readonly queueTurns: (names: readonly string[], open: () => boolean) => Promise<Map<string, BatchedTurn>>,
  ) {
    this.epoch = room.actor.epoch;
  }

  /** Still the same round: nothing ended it, no human spoke, control is with the agents. */
  private open(): boolean {
    const { room } = this;
    return !this.done && room.actor.epoch === this.epoch && room.state.turnState.control === 'agents';
  }

  async take(room: Room, agent: AgentConfig, order: TurnOrder): Promise<TurnEnd> {
    const at = this.observers.findIndex((name) => lower(name) === lower(agent.name));
    if (at < 0) return this.turns.take(room, agent, order);
    this.queued ??= this.queueTurns(this.observers.slice(at), () => this.open());
    const turn = (await this.queued).get(lower(agent.name));
    const end = turn ? await this.answer(turn, order) : await this.turns.take(room, agent, order);
    if (end.kind === 'posted' || end.kind === 'ended') this.finish();
    return end;
  }

  private async answer(turn: BatchedTurn, order: TurnOrder): Promise<TurnEnd> {
    const { room, agent } = turn;
    const outcome = await turn.outcome;
    if (outcome.kind === 'withdrawn') return { kind: 'passed' }; // as a turn stopped by `/pass <agent>`
    // An answer about the room as it was still stands; if the room changed meanwhile, the agent looks again.
    if (
      outcome.kind === 'answer' &&
      outcome.reply.kind !== 'tools' &&
      seenBy(agent.name, room.state.history()) === turn.seen
    ) {
      const text = outcome.reply.kind === 'reply' ? outcome.reply.text : '[pass]';
      return this.turns.take(room, agent, {
        ...order,
        answered: async () => ({ kind: 'reply', text, toolRuns: [] }),
      });
    }
    return this.turns.take(room, agent, order);
  }

  /** A reply ended the round: the observers after it are not asked, and their queued turns are withdrawn. */
  private finish(): void {
    this.done = true;
    void this.queued?.then((turns) => {
      for (const turn of turns.values()) turn.controller.abort(new Error('the round ended'));
    });
  }
}
