import type { AgentConfig } from '../config/index.js';
import type { Situation } from '../llm/situation.js';
import type { Logger } from '../log.js';
import { isNoProgress } from '../room/guards.js';
import { roundEnds } from '../room/recovery.js';
import { planWakes, type Wake } from '../room/routing.js';
import { handBack, handBackText, limitReached } from '../room/turns.js';
import type { ReplyTo, RoomMessage } from '../room/types.js';
import type { JournalStore } from '../store/index.js';
import type { AgentTurns } from './agent-turns.js';
import type { BatchTurns } from './batch-turns.js';
import type { HandBack } from './hand-back.js';
import type { LoopGuards } from './loop-guards.js';
import { privatePair } from './private-rooms.js';
import type { Requests } from './requests.js';
import type { Room, Rooms } from './rooms.js';
import type { TurnRunner } from './turn-runner.js';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** What the journal keeps of a round: who it asks, in order (fixed when it starts), and who it leaves out. */
interface RoundFrame {
  readonly exclude: readonly string[];
  readonly plan?: readonly Wake[];
  readonly started?: number;
}

/**
 * Carries out what src/room decides: who answers a message and in which situation, request_reply
 * threads (each awaited agent answers, the requester resumes once), hand-backs, and the outcome of
 * each turn (post, pass, world pass, failure).
 */
export class Conductor {
  private stopped = false;
  /** Journaled rounds queued or running in this process. */
  private readonly queued = new Set<number>();

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
      readonly journal: JournalStore;
      /** A stored message by row id (a round resumed after a restart). */
      readonly message: (room: Room, id: number) => RoomMessage | undefined;
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

  /**
   * A human message was stored: it may answer a request; then the agents it wakes take their turns. Called
   * in the transaction that stores it, so its round is journaled with it (a crash cannot lose the round).
   */
  human(room: Room, message: RoomMessage, queue = true): void {
    if (this.stopped) return;
    room.actor.newEpoch(); // queued rounds and agent turns give way to the human
    const completed = this.deps.requests.humanAnswer(room.key, message.author, message.content);
    const id = this.openRound(room, message, completed);
    if (id !== null) this.deps.journal.supersede(room.key, id); // so do rounds a crash left open
    if (queue) this.queueRound(room, message, id);
  }

  /**
   * Queues a journaled round (once: a round already queued is not queued again). A human's round gives
   * way to a newer human message; an agent's also to a hand-back.
   */
  private queueRound(room: Room, message: RoomMessage, id: number | null): void {
    if (id !== null) {
      if (this.queued.has(id)) return;
      this.queued.add(id);
    }
    const skipped = () => {
      if (id !== null) this.queued.delete(id);
      this.dropRound(id);
    };
    const run = async () => {
      // The human spoke before a hand-back that happened while their message waited: it is answered now.
      if (message.kind === 'human' && room.state.turnState.control === 'humans') {
        room.state.setTurnState({ consecutive: 0, control: 'agents' });
      }
      try {
        await this.round(room, message, id);
      } finally {
        if (id !== null) this.queued.delete(id); // queued or running: not queued again meanwhile
      }
    };
    if (message.kind === 'human') void room.actor.enqueueRound(run, skipped);
    else void room.actor.enqueueTurn(run, skipped);
  }

  /** An edit made `message` address agents it did not before: they answer it (not journaled: it is no new message). */
  edited(room: Room, message: RoomMessage, exclude: readonly string[]): void {
    void room.actor.enqueueRound(() => this.round(room, message, null, exclude));
  }

  /** A round a crash cut or a catch-up fetched: it goes on where it stopped (the turns taken not taken again). */
  resumeRound(room: Room, id: number, messageId: number): void {
    const message = this.deps.message(room, messageId);
    if (message) this.queueRound(room, message, id);
    else this.dropRound(id);
  }

  private openRound(room: Room, message: RoomMessage, exclude: readonly string[] = []): number | null {
    const id = this.deps.journal.openRound(room.key, message.id, this.deps.clock());
    if (id !== null) this.deps.journal.setFrame(id, { exclude } satisfies RoundFrame);
    return id;
  }

  private dropRound(id: number | null): void {
    if (id !== null) this.deps.journal.finish(id, 'dropped');
  }

  /**
   * An agent message was stored (a turn's reply, a messaging action, an echo): the turn limit, then it
   * asks (opens a request), answers the requests its turn was asked in, or — with `route` — is plain
   * talk the others may answer.
   */
  agentMessage(
    room: Room,
    message: RoomMessage,
    replyTo: ReplyTo,
    route: boolean,
    epoch = room.actor.epoch,
    queue = true,
  ): void {
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
    const id = this.openRound(room, message);
    if (queue) this.queueRound(room, message, id);
  }

  /**
   * The agents woken by `message` take their turns in order. Addressed agents (and those awaiting this
   * author) each answer, seeing the answers before theirs; the first other agent that posts ends the
   * round (its message is routed in turn). A newer human message ends the round. The round is journaled
   * (`id`): after a restart it goes on with the same plan, and a turn it took is not taken again.
   */
  async round(room: Room, message: RoomMessage, id: number | null, exclude: readonly string[] = []): Promise<void> {
    const { guards, journal } = this.deps;
    if (this.stopped) return; // left open: resumed after the restart
    if (message.kind === 'agent' && room.state.turnState.control === 'humans') return this.dropRound(id);
    const saved = (id !== null ? journal.get(id)?.frame : null) as RoundFrame | null | undefined;
    const pair = privatePair(this.deps.agents, room.state.row.platform, room.state.row.channel);
    const plan = saved?.plan ?? this.plan(room, message, pair !== undefined, saved?.exclude ?? exclude);
    const started = saved?.started ?? this.deps.clock();
    if (id !== null && !saved?.plan) journal.setFrame(id, { exclude: saved?.exclude ?? [], plan, started });
    const taken = new Map((id !== null ? journal.turnsOf(id) : []).map((turn) => [turn.agent, turn]));
    this.deps.log.debug(
      { room: room.key, message: message.id, author: message.author, woken: plan.map((w) => `${w.agent}:${w.reason}`) },
      plan.length > 0 ? 'routing' : 'routing: nobody woken',
    );
    const epoch = room.actor.epoch;
    const turns = this.deps.batch?.round(room, message, plan) ?? this.deps.turns;
    for (const wake of plan) {
      if (this.stopped) return;
      if (room.actor.epoch !== epoch || room.state.turnState.control === 'humans') break;
      const agent = this.agent(wake.agent);
      if (!agent || guards.failedThisRound(room, agent.name)) continue;
      const asked = wake.reason === 'addressed' || wake.reason === 'awaiting';
      const before = taken.get(agent.name);
      if (before && before.status !== 'open') {
        if (roundEnds(before.outcome ?? 'passed', asked)) break;
        continue;
      }
      const { situation, replyTo } = this.frame(room, message, wake, pair !== undefined, started);
      // An unjournaled round (an edit's) names its turns by message and time: they are never taken for another's.
      const key = `round:${id ?? `m${message.id}.${started}`}/${agent.name}`;
      const end = await turns.take(room, agent, {
        key,
        round: id ?? undefined,
        situation,
        replyTo,
        route: !asked,
      });
      if (this.stopped) return;
      if (roundEnds(end.kind, asked)) break;
    }
    if (id !== null) journal.finish(id, 'done');
  }

  /** Who `message` wakes, in order. */
  private plan(room: Room, message: RoomMessage, pair: boolean, exclude: readonly string[]): Wake[] {
    const { guards } = this.deps;
    if (pair) {
      const agents = privatePair(this.deps.agents, room.state.row.platform, room.state.row.channel) ?? [];
      return agents.filter((a) => !same(a.name, message.author)).map((a) => ({ agent: a.name, reason: 'direct' }));
    }
    const before = room.state.history().filter((m) => m.id < message.id);
    const skip = [
      ...exclude,
      ...this.deps.agents.filter((a) => guards.paused(room, message.author, a.name)).map((a) => a.name),
    ];
    return planWakes(this.deps.agents, message, before, { directAgent: room.state.row.directAgent, exclude: skip });
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
