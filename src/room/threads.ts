/**
 * request_reply threads: an agent asks several participants and resumes once, when all of them
 * have answered (or the deadline passed). Pure functions over plain data.
 */

export interface Participant {
  readonly name: string;
  readonly kind: 'agent' | 'human';
}

export interface Answer {
  readonly participant: string;
  readonly text: string;
  /** The participant answered `[pass]`: counted as answered, noted as a pass. */
  readonly passed: boolean;
  /** Its turn failed (its model could not be reached): counted as done, so the requester is not kept waiting. */
  readonly failed?: boolean | undefined;
  readonly at: number;
}

/**
 * open: waiting for answers; answered: all answered, the requester's resume is due;
 * expired: the deadline passed first, resume due; closed: the requester resumed; cancelled: /pass, /reset, hand-back.
 */
export type ThreadStatus = 'open' | 'answered' | 'expired' | 'closed' | 'cancelled';

export interface Thread {
  readonly id: number;
  readonly requester: string;
  /** Room key where the requester resumes. */
  readonly originRoom: string;
  /** Room key where the request was posted and where the awaited participants answer. */
  readonly targetRoom: string;
  /** The thread the requester was answering when it asked (nesting). */
  readonly parentId: number | null;
  /** What was asked (the request message's text). */
  readonly request: string;
  readonly awaited: readonly Participant[];
  readonly answers: readonly Answer[];
  readonly status: ThreadStatus;
  readonly openedAt: number;
  readonly deadline: number;
  /**
   * Whom the requester was answering when it asked, and that exchange's audience under privacy: its
   * resume answers the same people, so naming them then is an answer, not a new question.
   */
  readonly opener?: { readonly people: readonly string[]; readonly audience: readonly string[] | null } | undefined;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Participants who have not answered yet. */
export function pendingParticipants(thread: Thread): Participant[] {
  return thread.awaited.filter((p) => !thread.answers.some((a) => same(a.participant, p.name)));
}

export function isAwaitingAnswerFrom(thread: Thread, name: string): boolean {
  return thread.status === 'open' && pendingParticipants(thread).some((p) => same(p.name, name));
}

/**
 * The open thread in `room` that awaits `name`'s answer, innermost (most recently opened) first. Used
 * for humans' answers only: a human's message carries no turn identity. Agents' turns carry theirs.
 */
export function threadAwaiting(threads: readonly Thread[], room: string, name: string): Thread | undefined {
  let found: Thread | undefined;
  for (const thread of threads) {
    if (thread.targetRoom !== room || !isAwaitingAnswerFrom(thread, name)) continue;
    if (!found || thread.id > found.id) found = thread;
  }
  return found;
}

/** Records an answer (a participant's first answer counts; later ones are ignored). */
export function addAnswer(thread: Thread, answer: Answer): Thread {
  if (!isAwaitingAnswerFrom(thread, answer.participant)) return thread;
  // Recorded under the name it was awaited by (a platform may spell a person differently).
  const awaited = thread.awaited.find((p) => same(p.name, answer.participant));
  const answers = [...thread.answers, { ...answer, participant: awaited?.name ?? answer.participant }];
  const next = { ...thread, answers };
  return pendingParticipants(next).length === 0 ? { ...next, status: 'answered' } : next;
}

/** Open threads whose deadline has passed at `now`. */
export function dueForExpiry(threads: readonly Thread[], now: number): Thread[] {
  return threads.filter((t) => t.status === 'open' && t.deadline <= now);
}

/** Threads to cancel with `room` (its own and, transitively, those nested in them). */
export function threadsToCancel(threads: readonly Thread[], room: string): Thread[] {
  const live = threads.filter((t) => t.status === 'open' || t.status === 'answered' || t.status === 'expired');
  const cancel = new Set(live.filter((t) => t.originRoom === room || t.targetRoom === room).map((t) => t.id));
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of live) {
      if (t.parentId !== null && cancel.has(t.parentId) && !cancel.has(t.id)) {
        cancel.add(t.id);
        grew = true;
      }
    }
  }
  return live.filter((t) => cancel.has(t.id));
}

/**
 * When control goes to a room's humans: the threads it started (and those nested in them) are
 * cancelled; an open thread whose requester waits in another room expires instead, so that requester
 * resumes with what it has rather than waiting for a deadline.
 */
export function closeForHandBack(threads: readonly Thread[], room: string): { cancel: Thread[]; expire: Thread[] } {
  const cancel: Thread[] = [];
  const expire: Thread[] = [];
  for (const thread of threadsToCancel(threads, room)) {
    if (thread.originRoom === room) cancel.push({ ...thread, status: 'cancelled' });
    else if (thread.status === 'open') expire.push({ ...thread, status: 'expired' });
  }
  return { cancel, expire };
}

/** What the requester reads when it resumes: every answer, passes noted, and who did not answer. */
export function resumeSummary(thread: Thread): string {
  const answered = thread.answers.filter((a) => !a.failed);
  const failed = thread.answers.filter((a) => a.failed);
  const lines = answered.map((a) =>
    a.passed ? `- @${a.participant} passed (nothing to add)` : `- @${a.participant}: ${a.text}`,
  );
  const missing = pendingParticipants(thread).map((p) => `@${p.name}`);
  const head =
    thread.status === 'expired'
      ? `Your request #${thread.id} reached its deadline before everyone answered.`
      : failed.length > 0
        ? `Your request #${thread.id} is settled, but not everyone could answer.`
        : `Everyone you asked in request #${thread.id} has answered.`;
  return [
    head,
    `You asked: ${thread.request}`,
    'Answers:',
    ...(lines.length > 0 ? lines : ['- (none)']),
    ...(failed.length > 0
      ? [`Could not answer: ${failed.map((a) => `@${a.participant} (${a.text})`).join(', ')}`]
      : []),
    ...(missing.length > 0 ? [`Did not answer: ${missing.join(', ')}`] : []),
    'Continue from here: use these answers in your reply.',
  ].join('\n');
}
