import type { AgentConfig } from '../config/index.js';
import { isAwaitingAnswerFrom, pendingParticipants, resumeSummary, type Thread } from '../room/threads.js';
import type { ReplyTo } from '../room/types.js';
import type { AgentTurns } from './agent-turns.js';
import type { LoopGuards } from './loop-guards.js';
import type { Requests } from './requests.js';
import type { Room, Rooms } from './rooms.js';
import type { TurnRunner } from './turn-runner.js';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The turns request_reply threads call for: each awaited agent answers in the target room, the requester
 * resumes once in its own room, and a deadline stops the turns still working on a thread.
 */
export class RequestTurns {
  private stopped = false;

  constructor(
    private readonly deps: {
      readonly agents: readonly AgentConfig[];
      readonly rooms: Rooms;
      readonly requests: Requests;
      readonly turns: AgentTurns;
      readonly runner: TurnRunner;
      readonly guards: LoopGuards;
    },
  ) {}

  stop(): void {
    this.stopped = true;
  }

  private agent(name: string): AgentConfig | undefined {
    return this.deps.agents.find((a) => same(a.name, name));
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
    const end = await this.deps.turns.take(room, agent, {
      key: `thread:${thread.id}/${agent.name}`,
      situation: { kind: 'requested', requesters: [thread.requester], threads: [thread.id] },
      replyTo: { threads: [thread.id], people: [thread.requester], audience },
      route: false,
    });
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

  /** The requester's resume: one turn (journaled: a crash during it resumes it), then the thread is closed. */
  private async resume(threadId: number): Promise<void> {
    if (this.stopped) return;
    const { requests } = this.deps;
    const thread = requests.get(threadId);
    if (!thread || (thread.status !== 'answered' && thread.status !== 'expired')) return;
    const origin = this.deps.rooms.byKey(thread.originRoom);
    const agent = this.agent(thread.requester);
    if (!origin || !agent || origin.state.turnState.control === 'humans') {
      requests.close(threadId);
      return;
    }
    // It asked while answering an outer request: what it says now answers that one.
    const parent = thread.parentId !== null ? requests.get(thread.parentId) : undefined;
    const outer = parent && isAwaitingAnswerFrom(parent, agent.name) ? parent : undefined;
    const replyTo: ReplyTo = {
      threads: outer ? [outer.id] : [],
      people: [...(thread.opener?.people ?? []), ...(outer ? [outer.requester] : [])],
      audience: thread.opener?.audience ?? null,
    };
    await this.deps.turns.take(origin, agent, {
      key: `resume:${thread.id}`,
      situation: { kind: 'resume', summary: resumeSummary(thread) },
      replyTo,
      route: true,
    });
    if (!this.stopped) requests.close(threadId);
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
}
