import {
  addAnswer,
  closeForHandBack,
  isAwaitingAnswerFrom,
  type Participant,
  pendingParticipants,
  type Thread,
  threadAwaiting,
} from '../room/threads.js';
import type { ThreadStore } from '../store/index.js';

/** What the requests ask of whoever runs turns (the conductor), wired in the composition. */
export interface RequestHandlers {
  /** An awaited agent should answer `thread` in its target room. */
  ask(thread: Thread, agent: string): void;
  /** The requester's resume is due (everyone answered, or the deadline passed). */
  resume(thread: Thread): void;
  /** The deadline passed: stop the turns still working on this thread. */
  expired(thread: Thread): void;
}

/**
 * request_reply threads: an in-memory view over the store (write-through), one deadline timer per open
 * thread, and their life: open -> answered | expired -> closed, or cancelled by a hand-back.
 */
export class Requests {
  private readonly live = new Map<number, Thread>();
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(
    private readonly deps: {
      readonly store: ThreadStore;
      readonly clock: () => number;
      readonly timeoutMs: number;
      readonly handlers: RequestHandlers;
    },
  ) {}

  /** After a restart: deadlines re-armed, pending agents asked again, due resumes run. */
  restore(): void {
    for (const thread of this.deps.store.live()) {
      this.live.set(thread.id, thread);
      if (thread.status === 'open') {
        this.arm(thread);
        for (const p of pendingParticipants(thread)) if (p.kind === 'agent') this.deps.handlers.ask(thread, p.name);
      } else {
        this.deps.handlers.resume(thread);
      }
    }
  }

  get(id: number): Thread | undefined {
    return this.live.get(id);
  }

  all(): Thread[] {
    return [...this.live.values()];
  }

  /** Threads involving a room, for /status. */
  ofRoom(key: string): Thread[] {
    return this.all().filter((t) => t.originRoom === key || t.targetRoom === key);
  }

  /** Open threads in `room` awaiting `name` that were opened after message time `since` (same round). */
  awaitingSince(room: string, name: string, since: number): Thread[] {
    return this.all().filter((t) => t.targetRoom === room && t.openedAt >= since && isAwaitingAnswerFrom(t, name));
  }

  /** Opens a thread; each awaited agent is asked in the target room. */
  open(input: Omit<Thread, 'id' | 'answers' | 'status' | 'openedAt' | 'deadline'>): Thread {
    const now = this.deps.clock();
    const thread = this.deps.store.open({
      ...input,
      answers: [],
      status: 'open',
      openedAt: now,
      deadline: now + this.deps.timeoutMs,
    });
    this.live.set(thread.id, thread);
    this.arm(thread);
    for (const participant of input.awaited) {
      if (participant.kind === 'agent') this.deps.handlers.ask(thread, participant.name);
    }
    return thread;
  }

  /** Records `participant`'s answer to thread `id`; when everyone has answered, the resume is due. */
  answer(id: number, participant: string, text: string, passed: boolean, failed = false): Thread | undefined {
    const thread = this.live.get(id);
    if (!thread) return undefined;
    const next = addAnswer(thread, { participant, text, passed, ...(failed ? { failed } : {}), at: this.deps.clock() });
    if (next === thread) return thread;
    this.save(next);
    if (next.status === 'answered') this.deps.handlers.resume(next);
    return next;
  }

  /**
   * A human's message may answer a thread awaiting that human in the room (humans carry no turn
   * identity: the innermost open one). Returns the requesters whose thread it completed.
   */
  humanAnswer(room: string, author: string, text: string): string[] {
    const thread = threadAwaiting(this.all(), room, author);
    if (!thread) return [];
    const next = this.answer(thread.id, author, text, false);
    return next?.status === 'answered' ? [next.requester] : [];
  }

  /** The requester resumes once: marks the thread closed; false when it was not due. */
  close(id: number): Thread | undefined {
    const thread = this.live.get(id);
    if (!thread || (thread.status !== 'answered' && thread.status !== 'expired')) return undefined;
    this.save({ ...thread, status: 'closed' });
    return thread;
  }

  /** Control went to a room's humans: its threads are cancelled; requesters waiting elsewhere resume. */
  handBack(room: string): void {
    const { cancel, expire } = closeForHandBack(this.all(), room);
    for (const thread of cancel) this.save(thread);
    for (const thread of expire) {
      this.save(thread);
      this.deps.handlers.resume(thread);
    }
  }

  /** Stops the timers (shutdown). */
  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private save(thread: Thread): void {
    this.deps.store.save(thread);
    if (thread.status === 'closed' || thread.status === 'cancelled') this.live.delete(thread.id);
    else this.live.set(thread.id, thread);
    if (thread.status !== 'open') this.disarm(thread.id);
  }

  private deadline(id: number): void {
    const current = this.live.get(id);
    if (current?.status !== 'open') return;
    const expired: Thread = { ...current, status: 'expired' };
    this.save(expired);
    this.deps.handlers.expired(expired);
    this.deps.handlers.resume(expired);
  }

  private arm(thread: Thread): void {
    this.disarm(thread.id);
    const timer = setTimeout(
      () => {
        this.timers.delete(thread.id);
        this.deadline(thread.id);
      },
      Math.max(0, thread.deadline - this.deps.clock()),
    );
    timer.unref();
    this.timers.set(thread.id, timer);
  }

  private disarm(id: number): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }
}

export type { Participant, Thread };
