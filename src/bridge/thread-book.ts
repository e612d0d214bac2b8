import {
  type Answer,
  addAnswer,
  type Participant,
  type Thread,
  threadAwaiting,
  threadsToCancel,
} from '../room/threads.js';
import type { ThreadStore } from '../store/index.js';

/**
 * The live request_reply threads: an in-memory view over the store (write-through), plus one
 * deadline timer per open thread. The bridge decides what happens when a deadline passes.
 */
export class ThreadBook {
  private readonly live = new Map<number, Thread>();
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(
    private readonly store: ThreadStore,
    private readonly clock: () => number,
    private readonly onDeadline: (thread: Thread) => void,
  ) {}

  /** Loads the threads a previous run left open; returns them so the bridge can resume what is due. */
  load(): Thread[] {
    for (const thread of this.store.live()) {
      this.live.set(thread.id, thread);
      if (thread.status === 'open') this.arm(thread);
    }
    return [...this.live.values()];
  }

  all(): Thread[] {
    return [...this.live.values()];
  }

  get(id: number): Thread | undefined {
    return this.live.get(id);
  }

  awaiting(room: string, name: string): Thread | undefined {
    return threadAwaiting([...this.live.values()], room, name);
  }

  open(input: {
    requester: string;
    originRoom: string;
    targetRoom: string;
    parentId: number | null;
    request: string;
    awaited: Participant[];
    timeoutMs: number;
  }): Thread {
    const now = this.clock();
    const thread = this.store.open({
      requester: input.requester,
      originRoom: input.originRoom,
      targetRoom: input.targetRoom,
      parentId: input.parentId,
      request: input.request,
      awaited: input.awaited,
      answers: [],
      status: 'open',
      openedAt: now,
      deadline: now + input.timeoutMs,
    });
    this.live.set(thread.id, thread);
    this.arm(thread);
    return thread;
  }

  /** Records an answer; returns the updated thread (status `answered` once everyone has). */
  answer(thread: Thread, answer: Omit<Answer, 'at'>): Thread {
    const next = addAnswer(thread, { ...answer, at: this.clock() });
    if (next !== thread) this.update(next);
    return next;
  }

  update(thread: Thread): void {
    this.store.save(thread);
    if (thread.status === 'closed' || thread.status === 'cancelled') this.live.delete(thread.id);
    else this.live.set(thread.id, thread);
    if (thread.status !== 'open') this.disarm(thread.id);
  }

  /**
   * Closes the room's threads (and those nested in them) when control goes to its humans. A thread
   * whose requester waits in another room is not dropped silently: it expires, and is returned so
   * the requester can resume with what it has.
   */
  cancelFor(room: string): Thread[] {
    const released: Thread[] = [];
    for (const thread of threadsToCancel(this.all(), room)) {
      if (thread.originRoom === room) {
        this.update({ ...thread, status: 'cancelled' });
      } else if (thread.status === 'open') {
        const expired: Thread = { ...thread, status: 'expired' };
        this.update(expired);
        released.push(expired);
      }
    }
    return released;
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private arm(thread: Thread): void {
    this.disarm(thread.id);
    const delay = Math.max(0, thread.deadline - this.clock());
    const timer = setTimeout(() => {
      this.timers.delete(thread.id);
      const current = this.live.get(thread.id);
      if (current?.status === 'open') this.onDeadline(current);
    }, delay);
    timer.unref();
    this.timers.set(thread.id, timer);
  }

  private disarm(id: number): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }
}
