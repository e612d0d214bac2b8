import type { AgentConfig } from '../config/index.js';
import { describeError } from '../errors.js';
import { renderSituation, type Situation } from '../llm/situation.js';
import { metrics } from '../metrics.js';
import type { StreamingPost } from '../ports.js';
import { isNoProgress, PAIR_GUARD, pairKey, pairPaused } from '../room/guards.js';
import { classifyReply, nextCandidates } from '../room/index.js';
import {
  isAwaitingAnswerFrom,
  type Participant,
  pendingParticipants,
  resumeSummary,
  type Thread,
} from '../room/threads.js';
import type { RoomMessage, ToolRun } from '../room/types.js';
import type { Bridge, Room } from './bridge.js';
import { privatePair, RoomMessaging } from './messaging.js';
import { StreamPreview } from './stream-preview.js';

/** How a turn ended, from the caller's point of view. */
type TurnEnd = 'posted' | 'passed' | 'ended';

type RunResult = { readonly stream?: StreamingPost | undefined } & (
  | { readonly kind: 'reply'; readonly text: string; readonly toolRuns: readonly ToolRun[] }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'round-limit'; readonly text: string; readonly toolRuns: readonly ToolRun[] }
);

/**
 * Decides who speaks and runs their turns: normal routing (first non-pass candidate in order),
 * request_reply threads (each awaited participant answers, then the requester resumes once),
 * deadlines, and the loop guards.
 */
export class Conductor {
  /** Which request a participant's turn is for, so a deadline stops only that turn. */
  private readonly threadTurns = new WeakMap<AbortController, number>();
  /** Pairs already told they are paused, per room, so the humans are told once. */
  private readonly pausedNotified = new Set<string>();

  constructor(private readonly bridge: Bridge) {}

  private get settings() {
    return this.bridge.config.settings;
  }

  /** Routing after a human message, or an agent message that neither asks nor answers. */
  async route(room: Room, message: RoomMessage, exclude: readonly string[] = []): Promise<void> {
    if (this.bridge.isStopped) return;
    if (message.kind === 'agent' && room.state.turnState.control === 'humans') return;
    const before = room.state.history().filter((m) => m.id < message.id);
    const excluded = new Set(exclude.map((n) => n.toLowerCase()));
    // In a private agent-to-agent chat the other agent answers; elsewhere the wake rules decide.
    const pair = privatePair(this.bridge, room);
    const awake = pair
      ? pair.filter((a) => a.name.toLowerCase() !== message.author.toLowerCase())
      : nextCandidates(this.bridge.config.agents, message, before, { directAgent: room.state.row.directAgent });
    const candidates = awake.filter(
      (c) => !excluded.has(c.name.toLowerCase()) && !this.paused(room, message.author, c.name),
    );
    const epoch = room.actor.epoch;
    for (const candidate of candidates) {
      if (this.bridge.isStopped || room.actor.epoch !== epoch) return;
      const agent = this.bridge.agent(candidate.name);
      if (!agent) continue;
      const situation: Situation = pair
        ? { kind: 'direct', user: message.author }
        : this.bridge.situationFor(room, message, agent);
      const end = await this.turn(room, agent, situation, epoch);
      if (end !== 'passed') return;
    }
  }

  /** An agent message was stored: it opens a thread, answers one, or is routed as plain talk. */
  afterAgentMessage(room: Room, message: RoomMessage, epoch: number): void {
    const answering = this.bridge.threads.awaiting(room.key, message.author);
    const partner = this.previousAgent(room, message);
    const paused = partner !== undefined && this.paused(room, message.author, partner);
    if (paused && partner) this.notifyPaused(room, message.author, partner);
    const requests = (message.requests ?? message.mentions).filter((name) => !this.paused(room, message.author, name));

    if (requests.length > 0) {
      const awaited = requests.map((name) => ({ name, kind: 'agent' as const }));
      this.openThread(room, room, message.author, message.content, awaited, answering?.id ?? null);
      return;
    }
    if (answering) {
      this.answer(answering, message.author, message.content, false);
      return;
    }
    if (paused) return;
    if (isNoProgress(message.content, this.bridge.previousOwn(room, message.author, message.id))) return;
    if (room.actor.epoch !== epoch) return; // a human spoke meanwhile: the router decides from their message
    void room.actor.enqueueTurn(() => this.route(room, message));
  }

  /** Opens a request_reply thread and queues the awaited agents' turns in the target room. */
  openThread(
    origin: Room,
    target: Room,
    requester: string,
    request: string,
    awaited: Participant[],
    parentId: number | null = null,
  ): Thread {
    const thread = this.bridge.threads.open({
      requester,
      originRoom: origin.key,
      targetRoom: target.key,
      parentId,
      request,
      awaited,
      timeoutMs: this.settings.REPLY_TIMEOUT_S * 1000,
    });
    for (const participant of awaited) {
      if (participant.kind !== 'agent') continue;
      void target.actor.enqueue(() => this.participantTurn(target, thread.id, participant.name));
    }
    return thread;
  }

  /**
   * A human message may answer a thread awaiting that human. Returns the requesters whose
   * thread it completed (they resume with the answers; routing does not wake them again).
   */
  humanAnswer(room: Room, message: RoomMessage): string[] {
    const thread = this.bridge.threads.awaiting(room.key, message.author);
    if (!thread) return [];
    const next = this.answer(thread, message.author, message.content, false);
    return next.status === 'answered' ? [next.requester] : [];
  }

  /** Records an answer; when everyone has answered, the requester's resume is queued. */
  answer(thread: Thread, participant: string, text: string, passed: boolean): Thread {
    const next = this.bridge.threads.answer(thread, { participant, text, passed });
    if (next.status === 'answered') this.queueResume(next);
    return next;
  }

  /** A deadline passed: the requester resumes with the answers so far and who did not answer. */
  expire(thread: Thread): void {
    const current = this.bridge.threads.get(thread.id);
    if (current?.status !== 'open') return;
    const expired: Thread = { ...current, status: 'expired' };
    this.bridge.threads.update(expired);
    // Participants still working on it are stopped: the requester goes on without them.
    const target = this.bridge.roomByKey(expired.targetRoom);
    // Only their turns for this request: the same agent may be busy with something else.
    for (const participant of pendingParticipants(expired)) {
      const turn = target?.actor.inFlight.get(participant.name);
      if (turn && this.threadTurns.get(turn) === expired.id) turn.abort(new Error('the request reached its deadline'));
    }
    this.queueResume(expired);
  }

  /** After a restart: pending participants are asked again, due resumes run. */
  restore(thread: Thread): void {
    if (thread.status === 'answered' || thread.status === 'expired') {
      this.queueResume(thread);
      return;
    }
    const target = this.bridge.roomByKey(thread.targetRoom);
    if (!target) return;
    for (const participant of thread.awaited) {
      if (participant.kind !== 'agent' || !isAwaitingAnswerFrom(thread, participant.name)) continue;
      void target.actor.enqueue(() => this.participantTurn(target, thread.id, participant.name));
    }
  }

  queueResume(thread: Thread): void {
    const origin = this.bridge.roomByKey(thread.originRoom);
    if (origin) void origin.actor.enqueue(() => this.resume(thread.id));
  }

  /** An awaited agent answers a request ("action requested" frame). A pass counts as answered. */
  private async participantTurn(room: Room, threadId: number, name: string): Promise<void> {
    const thread = this.bridge.threads.get(threadId);
    const agent = this.bridge.agent(name);
    if (!thread || !agent || !isAwaitingAnswerFrom(thread, name) || this.bridge.isStopped) return;
    if (room.state.turnState.control === 'humans') return;
    const end = await this.turn(
      room,
      agent,
      { kind: 'requested', requester: thread.requester, thread: thread.id },
      room.actor.epoch,
      thread.id,
    );
    const current = this.bridge.threads.get(threadId);
    if (this.bridge.isStopped) return; // a turn cut short by shutdown is asked again after the restart
    if (end === 'passed' && current && isAwaitingAnswerFrom(current, name)) this.answer(current, name, '', true);
  }

  /** The requester continues, once, with every answer in its context. */
  private async resume(threadId: number): Promise<void> {
    const thread = this.bridge.threads.get(threadId);
    if (!thread || (thread.status !== 'answered' && thread.status !== 'expired') || this.bridge.isStopped) return;
    this.bridge.threads.update({ ...thread, status: 'closed' });
    const origin = this.bridge.roomByKey(thread.originRoom);
    const agent = this.bridge.agent(thread.requester);
    if (!origin || !agent || origin.state.turnState.control === 'humans') return;
    const end = await this.turn(origin, agent, { kind: 'resume', summary: resumeSummary(thread) }, origin.actor.epoch);
    if (end !== 'passed' || thread.parentId === null) return;
    // It was answering an outer request and has nothing more to say: that counts as its answer.
    const parent = this.bridge.threads.get(thread.parentId);
    if (parent && isAwaitingAnswerFrom(parent, agent.name)) this.answer(parent, agent.name, '', true);
  }

  /** One agent turn: run it, then post, pass, hand back, or report the failure. */
  private async turn(
    room: Room,
    agent: AgentConfig,
    situation: Situation,
    epoch: number,
    threadId?: number,
  ): Promise<TurnEnd> {
    const controlAtStart = room.state.turnState.control;
    metrics.agentTurns.inc({ agent: agent.name });
    const result = await this.run(room, agent, situation, threadId);
    const { stream } = result;
    if (stream && (result.kind === 'aborted' || result.kind === 'failed')) await stream.cancel().catch(() => {});
    // Control went to the humans during this turn (its own messaging actions reached the turn limit):
    // the reply it was writing is not posted.
    const wouldPost = result.kind === 'reply' || result.kind === 'round-limit';
    if (wouldPost && controlAtStart === 'agents' && room.state.turnState.control === 'humans') {
      await stream?.cancel().catch(() => {});
      return 'ended';
    }
    switch (result.kind) {
      case 'aborted':
        return 'passed'; // `/pass <agent>` skips only this agent
      case 'failed':
        this.bridge.log.error({ err: result.error, room: room.key, agent: agent.name }, 'agent turn failed');
        await this.bridge.handBack(
          room,
          'agent error',
          `@${agent.name} could not answer: ${describeError(result.error)}`,
        );
        return 'ended';
      case 'round-limit': {
        const outcome = classifyReply(agent.name, result.text);
        if (outcome.kind === 'pass') await stream?.cancel().catch(() => {});
        else await this.bridge.postAgent(room, agent, outcome.text, result.toolRuns, { stream });
        await this.bridge.handBack(
          room,
          'tool round limit',
          `@${agent.name} stopped after ${this.settings.MAX_TOOL_ROUNDS} tool rounds; control is back with the humans.`,
        );
        return 'ended';
      }
      case 'reply': {
        const outcome = classifyReply(agent.name, result.text);
        if (outcome.kind === 'pass') {
          metrics.passes.inc({ agent: agent.name });
          await stream?.cancel().catch(() => {});
          return 'passed';
        }
        if (outcome.kind === 'world-pass') {
          await this.bridge.postAgent(room, agent, outcome.text, result.toolRuns, { stream });
          await this.bridge.handBack(room, 'world pass');
          return 'ended';
        }
        const posted = await this.bridge.postAgent(room, agent, outcome.text, result.toolRuns, { stream });
        if (posted) this.bridge.afterRecord(room, posted, epoch);
        return 'posted';
      }
    }
  }

  private async run(room: Room, agent: AgentConfig, situation: Situation, threadId?: number): Promise<RunResult> {
    const controller = new AbortController();
    room.actor.inFlight.set(agent.name, controller);
    if (threadId !== undefined) this.threadTurns.set(controller, threadId);
    const preview = new StreamPreview(room.adapter, room.state.row.channel, agent.name);
    try {
      const output = await this.bridge.runner.run(room.adapter, {
        agent,
        channel: room.state.row.channel,
        channelKey: room.key,
        history: this.visibleHistory(room, agent),
        situation: [renderSituation(situation, agent.prompts), this.chatNote(agent)].filter(Boolean).join('\n\n'),
        signal: controller.signal,
        messaging: new RoomMessaging(this.bridge, room, agent),
        onText: preview.enabled ? (text) => preview.show(text) : undefined,
      });
      const stream = preview.post;
      if (output.roundLimitHit) return { kind: 'round-limit', text: output.text, toolRuns: output.toolRuns, stream };
      return { kind: 'reply', text: output.text, toolRuns: output.toolRuns, stream };
    } catch (error) {
      if (controller.signal.aborted) {
        this.bridge.log.info({ room: room.key, agent: agent.name }, 'turn stopped by an operator');
        return { kind: 'aborted', stream: preview.post };
      }
      return { kind: 'failed', error, stream: preview.post };
    } finally {
      room.actor.inFlight.delete(agent.name);
    }
  }

  /**
   * The room's history as this agent may see it. With PRIVACY=mentions (or the room listed in
   * PRIVACY_ROOMS): messages that mention no agent, mention it, or are its own (and the bridge's).
   */
  visibleHistory(room: Room, agent: AgentConfig): readonly RoomMessage[] {
    const history = room.state.history();
    if (this.settings.PRIVACY !== 'mentions' && !this.settings.PRIVACY_ROOMS.includes(room.key)) return history;
    const me = agent.name.toLowerCase();
    return history.filter(
      (m) =>
        m.kind === 'system' ||
        (m.kind === 'agent' && m.author.toLowerCase() === me) ||
        m.mentions.length === 0 ||
        m.mentions.some((n) => n.toLowerCase() === me),
    );
  }

  /** Chat requests waiting for this agent's answer, shown at the start of its turn. */
  private chatNote(agent: AgentConfig): string {
    // One read per turn; expired requests are left out here and marked expired by the chat actions.
    const now = this.bridge.clock();
    const me = agent.name.toLowerCase();
    const involving = this.bridge.options.store.chats.involving(agent.name);
    const pending = involving.filter((r) => r.status === 'pending' && r.expiresAt > now && r.to.toLowerCase() === me);
    const open = involving
      .filter((r) => r.status === 'accepted')
      .map((r) => (r.from.toLowerCase() === me ? r.to : r.from));
    const lines: string[] = [];
    if (pending.length > 0) {
      lines.push('Private chat requests waiting for your answer (chat_response(request_id, accept)):');
      for (const r of pending) lines.push(`- #${r.id} from @${r.from}: ${r.reason}`);
    }
    if (open.length > 0)
      lines.push(`You have private chats open with ${[...new Set(open)].map((n) => `@${n}`).join(', ')} (use chat).`);
    return lines.join('\n');
  }

  /** The last agent other than the author to speak before `message`. */
  private previousAgent(room: Room, message: RoomMessage): string | undefined {
    const history = room.state.history();
    for (let i = history.length - 1; i >= 0; i--) {
      const m = history[i];
      if (!m || m.id >= message.id || m.kind !== 'agent') continue;
      if (m.author.toLowerCase() !== message.author.toLowerCase()) return m.author;
    }
    return undefined;
  }

  /** The per-pair guard: these two agents exchanged too much too fast, across human messages. */
  private paused(room: Room, a: string, b: string): boolean {
    if (!this.bridge.agent(a) || !this.bridge.agent(b)) return false;
    return pairPaused(room.state.history(), a, b, this.bridge.clock(), PAIR_GUARD);
  }

  private notifyPaused(room: Room, a: string, b: string): void {
    const key = `${room.key}/${pairKey(a, b)}`;
    if (this.pausedNotified.has(key)) return;
    this.pausedNotified.add(key);
    const text =
      `@human @${a} and @${b} have exchanged more than ${PAIR_GUARD.limit} messages in ` +
      `${PAIR_GUARD.windowMs / 60_000} minutes, so they no longer wake each other for now. ` +
      'Mention one of them to continue.';
    void room.actor.enqueue(() => this.bridge.postSystem(room, text));
  }

  /** Forget that a pair was told (after /reset). */
  forgetPauses(room: Room): void {
    for (const key of [...this.pausedNotified]) if (key.startsWith(`${room.key}/`)) this.pausedNotified.delete(key);
  }
}
