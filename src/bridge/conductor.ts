import type { AgentConfig } from '../config/index.js';
import type { Situation } from '../llm/situation.js';
import type { Logger } from '../log.js';
import { isNoProgress } from '../room/guards.js';
import { planWakes, type Wake } from '../room/routing.js';
import { isAwaitingAnswerFrom, pendingParticipants, resumeSummary, type Thread } from '../room/threads.js';
import { handBack, handBackText, limitReached } from '../room/turns.js';
import type { ReplyTo, RoomMessage } from '../room/types.js';
import type { AgentTurns } from './agent-turns.js';
import type { BatchTurns } from './batch-turns.js';
import type { HandBack } from './hand-back.js';
import type { LoopGuards } from './loop-guards.js';
import { privatePair } from './private-rooms.js';
import type { Requests } from './requests.js';
import type { Room, Rooms } from './rooms.js';
import type { TurnRunner } from './turn-runner.js';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Carries out what src/room decides: who answers a message and in which situation, request_reply
 * threads (each awaited agent answers, the requester resumes once), hand-backs, and the outcome of
 * each turn (post, pass, world pass, failure).
 */
export class Conductor {
  private stopped = false;

  constructor(
    private readonly deps: {
      readonly agents: readonly AgentConfig[];
      readonly turnLimit: number;
      readonly rooms: Rooms;
      readonly requests: Requests;
      readonly turns: AgentTurns;
      /** BATCHING=on: a round's observe phase asked in batched calls. */
      readonly batch?: BatchTurns | undefined;
      readonly runner: TurnRunner;
      readonly guards: LoopGuards;
      readonly handBack: HandBack;
      readonly clock: () => number;
      readonly log: Logger;
    },
  ) {}

  stop(): void {
    this.stopped = true;
  }

  private agent(name: string): AgentConfig | undefined {
    return this.deps.agents.find((a) => same(a.name, name));
  }

  /** A human message was stored: it may answer a request; then the agents it wakes take their turns. */
  human(room: Room, message: RoomMessage): void {
    if (this.stopped) return;
    room.actor.newEpoch(); // queued rounds and agent turns give way to the human
    const completed = this.deps.requests.humanAnswer(room.key, message.author, message.content);
    void room.actor.enqueueRound(async () => {
      // The human spoke before a hand-back that happened while their message waited: it is answered now.
      if (room.state.turnState.control === 'humans') room.state.setTurnState({ consecutive: 0, control: 'agents' });
      await this.round(room, message, completed);
    });
  }

  /**
   * An agent message was stored (a turn's reply, a messaging action, an echo): the turn limit, then it
   * asks (opens a request), answers the requests its turn was asked in, or — with `route` — is plain
   * talk the others may answer.
   */
  agentMessage(room: Room, message: RoomMessage, replyTo: ReplyTo, route: boolean, epoch = room.actor.epoch): void {
    if (this.stopped) return;
    const state = room.state.turnState;
    if (state.control === 'humans') return;
    if (limitReached(state, this.deps.turnLimit)) {
      room.state.setTurnState(handBack('turn limit'));
      void room.actor.enqueue(() => this.deps.handBack(room, 'turn limit', handBackText(this.deps.turnLimit)));
      return;
    }
    const { guards, requests } = this.deps;
    const partner = this.previousAgent(room, message);
    const paused = partner !== undefined && guards.paused(room, message.author, partner);
    if (paused && partner) guards.tellPaused(room, message.author, partner);
    // Asking a human opens no request (no deadline): the awaiting rule wakes the asker when they answer.
    const asked = (message.requests ?? message.mentions).filter(
      (name) => this.agent(name) && !guards.paused(room, message.author, name),
    );
    if (asked.length > 0) {
      requests.open({
        requester: message.author,
        originRoom: room.key,
        targetRoom: room.key,
        parentId: replyTo.threads[0] ?? null,
        request: message.content,
        awaited: asked.map((name) => ({ name, kind: 'agent' as const })),
        opener: { people: replyTo.people, audience: replyTo.audience },
      });
      return;
    }
    for (const id of replyTo.threads) requests.answer(id, message.author, message.content, false);
    if (replyTo.threads.length > 0 || paused || !route) return;
    if (isNoProgress(message.content, room.state.previousOwn(message.author, message.id))) return;
    if (room.actor.epoch !== epoch) return; // a human spoke meanwhile: the router decides from their message
    void room.actor.enqueueTurn(() => this.round(room, message));
  }

  /**
   * The agents woken by `message` take their turns in order. Addressed agents (and those awaiting this
   * author) each answer, seeing the answers before theirs; the first other agent that posts ends the
   * round (its message is routed in turn). A newer human message ends the round.
   */
  async round(room: Room, message: RoomMessage, exclude: readonly string[] = []): Promise<void> {
    if (this.stopped || (message.kind === 'agent' && room.state.turnState.control === 'humans')) return;
    const { guards } = this.deps;
    const before = room.state.history().filter((m) => m.id < message.id);
    const pair = privatePair(this.deps.agents, room.state.row.platform, room.state.row.channel);
    const skip = [
      ...exclude,
      ...this.deps.agents.filter((a) => guards.paused(room, message.author, a.name)).map((a) => a.name),
    ];
    const plan: Wake[] = pair
      ? pair.filter((a) => !same(a.name, message.author)).map((a) => ({ agent: a.name, reason: 'direct' as const }))
      : planWakes(this.deps.agents, message, before, { directAgent: room.state.row.directAgent, exclude: skip });
    this.deps.log.debug(
      { room: room.key, message: message.id, author: message.author, woken: plan.map((w) => `${w.agent}:${w.reason}`) },
      plan.length > 0 ? 'routing' : 'routing: nobody woken',
    );
    const epoch = room.actor.epoch;
    const started = this.deps.clock();
    const turns = this.deps.batch?.round(room, message, plan) ?? this.deps.turns;
    for (const wake of plan) {
      if (this.stopped || room.actor.epoch !== epoch || room.state.turnState.control === 'humans') return;
      const agent = this.agent(wake.agent);
      if (!agent || guards.failedThisRound(room, agent.name)) continue;
      const asked = wake.reason === 'addressed' || wake.reason === 'awaiting';
      const { situation, replyTo } = this.frame(room, message, wake, pair !== undefined, started);
      const end = await turns.take(room, agent, situation, replyTo, !asked);
      if (end.kind === 'ended') return;
      if (end.kind === 'posted' && !asked) return;
    }
  }

  /** The situation and the identity of a turn woken by `message`. */
  private frame(
    room: Room,
    message: RoomMessage,
    wake: Wake,
    pair: boolean,
    roundStarted: number,
  ): { situation: Situation; replyTo: ReplyTo } {
    const audience = message.audience ?? null;
    // A turn in a round answers the exchange so far: naming its author, or an agent that already
    // answered in this round, is part of the answer, not a new question.
    const people = [message.author, ...this.spokeSince(room, message)];
    if (pair || wake.reason === 'direct') {
      return { situation: { kind: 'direct', user: message.author }, replyTo: { threads: [], people, audience } };
    }
    if (wake.reason === 'awaiting') {
      return { situation: { kind: 'answered', by: message.author }, replyTo: { threads: [], people, audience } };
    }
    if (wake.reason === 'addressed') {
      // Agents who asked it in this same round (an earlier answer named it): one answer serves them all.
      const threads = this.deps.requests.awaitingSince(room.key, wake.agent, roundStarted);
      const requesters = [message.author, ...threads.map((t) => t.requester)];
      return {
        situation: { kind: 'requested', requesters, threads: threads.map((t) => t.id) },
        replyTo: { threads: threads.map((t) => t.id), people: requesters, audience },
      };
    }
    return { situation: { kind: 'observe' }, replyTo: { threads: [], people, audience } };
  }

  /** An awaited agent answers a request in the target room. */
  ask(thread: Thread, agent: string): void {
    const room = this.deps.rooms.byKey(thread.targetRoom);
    if (room) void room.actor.enqueue(() => this.participantTurn(room, thread.id, agent));
  }

  private async participantTurn(room: Room, threadId: number, name: string): Promise<void> {
    const { requests, guards } = this.deps;
    const thread = requests.get(threadId);
    const agent = this.agent(name);
    if (this.stopped || !thread || !agent || !isAwaitingAnswerFrom(thread, name)) return;
    if (room.state.turnState.control === 'humans') return;
    if (guards.failedThisRound(room, agent.name)) {
      requests.answer(threadId, agent.name, 'its model failed earlier in this round', false, true);
      return;
    }
    const audience =
      room.state.privacy === 'mentions' ? [thread.requester, ...thread.awaited.map((p) => p.name)] : null;
    const end = await this.deps.turns.take(
      room,
      agent,
      { kind: 'requested', requesters: [thread.requester], threads: [thread.id] },
      { threads: [thread.id], people: [thread.requester], audience },
      false,
    );
    if (this.stopped) return; // a turn cut short by shutdown is asked again after the restart
    const current = requests.get(threadId);
    if (end.kind === 'passed' && current && isAwaitingAnswerFrom(current, name)) {
      requests.answer(threadId, name, '', true); // `/pass <agent>` skipped it
    }
  }

  /** The requester's resume is due: it continues once, in its own room, with every answer. */
  queueResume(thread: Thread): void {
    const origin = this.deps.rooms.byKey(thread.originRoom);
    if (origin) void origin.actor.enqueue(() => this.resume(thread.id));
  }

  private async resume(threadId: number): Promise<void> {
    if (this.stopped) return;
    const { requests } = this.deps;
    const thread = requests.close(threadId);
    if (!thread) return;
    const origin = this.deps.rooms.byKey(thread.originRoom);
    const agent = this.agent(thread.requester);
    if (!origin || !agent || origin.state.turnState.control === 'humans') return;
    // It asked while answering an outer request: what it says now answers that one.
    const parent = thread.parentId !== null ? requests.get(thread.parentId) : undefined;
    const outer = parent && isAwaitingAnswerFrom(parent, agent.name) ? parent : undefined;
    const replyTo: ReplyTo = {
      threads: outer ? [outer.id] : [],
      people: [...(thread.opener?.people ?? []), ...(outer ? [outer.requester] : [])],
      audience: thread.opener?.audience ?? null,
    };
    await this.deps.turns.take(origin, agent, { kind: 'resume', summary: resumeSummary(thread) }, replyTo, true);
  }

  /** A deadline passed: the turns still working on it are stopped. */
  expired(thread: Thread): void {
    const target = this.deps.rooms.byKey(thread.targetRoom);
    if (!target) return;
    this.deps.runner.stopThreadTurns(
      target,
      thread.id,
      pendingParticipants(thread).map((p) => p.name),
    );
  }

  /** The agents that posted in the room after `message` (earlier answers in its round). */
  private spokeSince(room: Room, message: RoomMessage): string[] {
    const names = room.state
      .history()
      .filter((m) => m.id > message.id && m.kind === 'agent')
      .map((m) => m.author);
    return [...new Set(names)];
  }

  /** The last agent other than the author to speak before `message`. */
  private previousAgent(room: Room, message: RoomMessage): string | undefined {
    const history = room.state.history();
    for (let i = history.length - 1; i >= 0; i--) {
      const m = history[i];
      if (!m || m.id >= message.id || m.kind !== 'agent') continue;
      if (!same(m.author, message.author)) return m.author;
    }
    return undefined;
  }
}
