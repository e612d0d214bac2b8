/**
 * Rule 5: requests. An agent asks several participants (agents and humans) and resumes once, when all of them have
 * answered, the deadline passed, or the room handed back. A request lives in its target room; its origin room (where
 * the requester resumes) hears of it by notes.
 */
import { askForRequest, removeWhere } from './asks.js';
import { type Draft, same } from './draft.js';
import type { RequestRow } from './effects.js';
import type { Participant, RequestAnswer, SettledRequest } from './events.js';
import type { OpenRequest } from './state.js';
import { nested, oneLine } from './text/quoting.js';

export function row(d: Draft, request: OpenRequest, status: RequestRow['status']): RequestRow {
  return {
    id: request.id,
    requester: request.requester,
    origin: request.origin,
    target: d.setup.key,
    parent: request.parent,
    text: request.text,
    awaited: request.awaited,
    answers: request.answers,
    status,
    openedAt: request.openedAt,
    deadline: request.deadline,
    opener: request.opener,
  };
}

export const pending = (request: Pick<OpenRequest, 'awaited' | 'answers'>): Participant[] =>
  request.awaited.filter((p) => !request.answers.some((a) => same(a.participant, p.name)));

export const awaits = (request: OpenRequest, name: string): boolean => pending(request).some((p) => same(p.name, name));

/** Rule 5.1: a request opens here; each awaited agent is asked, in order. Returns its id. */
export function openRequest(
  d: Draft,
  input: {
    readonly requester: string;
    readonly origin: string;
    readonly parent: number | null;
    readonly text: string;
    readonly seq: number;
    readonly awaited: readonly Participant[];
    readonly opener: OpenRequest['opener'];
  },
): OpenRequest {
  const request: OpenRequest = {
    ...input,
    id: d.requestId(),
    answers: [],
    openedAt: d.now,
    deadline: d.now + d.setup.requestTimeoutMs,
  };
  d.set({ requests: [...d.state.requests, request] });
  d.write({ type: 'request', request: row(d, request, 'open') });
  d.effect({ type: 'timer', at: request.deadline, request: request.id });
  d.record({ kind: 'request', id: request.id, status: 'open' });
  if (input.origin !== d.setup.key) {
    const note = { kind: 'request-opened', id: request.id, target: d.setup.key, parent: request.parent } as const;
    d.note(input.origin, note);
  }
  const audience = d.privacy === 'mentions' ? [request.requester, ...request.awaited.map((p) => p.name)] : null;
  for (const participant of request.awaited) {
    if (participant.kind !== 'agent') continue;
    askForRequest(d, {
      agent: participant.name,
      reason: 'request',
      about: input.seq,
      author: request.requester,
      requests: [request.id],
      audience,
      fromAgent: false,
      root: request.opener.root,
      trace: request.opener.trace,
    });
  }
  return request;
}

/** Rule 5.2: a participant's first answer counts; the last one settles the request. */
export function answerRequest(d: Draft, id: number, answer: Omit<RequestAnswer, 'at'>): void {
  const request = d.state.requests.find((r) => r.id === id);
  if (!request || !awaits(request, answer.participant)) return;
  const awaited = request.awaited.find((p) => same(p.name, answer.participant));
  const next: OpenRequest = {
    ...request,
    answers: [...request.answers, { ...answer, participant: awaited?.name ?? answer.participant, at: d.now }],
  };
  replace(d, next);
  if (pending(next).length === 0) settle(d, next, 'answered');
  else d.write({ type: 'request', request: row(d, next, 'open') });
}

/**
 * Rule 5.3: a human's message answers the newest open request here that awaits them — as a human: a human never
 * takes an agent's place, whatever their name (rule 0). Returns its requester.
 */
export function humanAnswers(d: Draft, author: string, text: string): string[] {
  const awaitsHuman = (r: OpenRequest) => pending(r).some((p) => p.kind === 'human' && same(p.name, author));
  const open = [...d.state.requests].reverse().find(awaitsHuman);
  if (!open) return [];
  answerRequest(d, open.id, { participant: author, text, outcome: 'answer' });
  return d.state.requests.some((r) => r.id === open.id) ? [] : [open.requester];
}

function replace(d: Draft, request: OpenRequest): void {
  d.set({ requests: d.state.requests.map((r) => (r.id === request.id ? request : r)) });
}

export function settled(request: OpenRequest, status: SettledRequest['status']): SettledRequest {
  return {
    id: request.id,
    requester: request.requester,
    parent: request.parent,
    text: request.text,
    status,
    awaited: request.awaited,
    answers: request.answers,
    opener: request.opener,
  };
}

/**
 * A request leaves this room: answered, expired or cancelled. Its asks lose it; the origin room is told (or, when
 * it is this room, the requester's resume is queued at once).
 */
export function settle(d: Draft, request: OpenRequest, status: SettledRequest['status'], deliver = true): void {
  d.set({ requests: d.state.requests.filter((r) => r.id !== request.id) });
  d.write({ type: 'request', request: row(d, request, status) });
  d.record({ kind: 'request', id: request.id, status });
  dropFromAsks(d, request.id);
  if (!deliver || status === 'cancelled') return;
  const note = { kind: 'request-settled', request: settled(request, status) } as const;
  if (request.origin === d.setup.key) onSettled(d, note.request);
  else d.note(request.origin, note);
}

/**
 * Queued asks no longer answer a settled request; one left answering nothing goes (5.4) — a participant's, or a
 * resume whose reply was to answer it.
 */
function dropFromAsks(d: Draft, id: number): void {
  const queue = d.state.queue.flatMap((ask) => {
    if (!ask.requests.includes(id)) return [ask];
    const requests = ask.requests.filter((r) => r !== id);
    return requests.length === 0 && ask.questions.length === 0 ? [] : [{ ...ask, requests }];
  });
  d.set({ queue });
}

/** Rule 5.5, in the origin room: the requester resumes once (not when the humans hold control here). */
export function onSettled(d: Draft, request: SettledRequest): void {
  d.set({ away: d.state.away.filter((a) => a.id !== request.id) });
  if (d.state.control.holder === 'humans' || !d.agent(request.requester)) {
    d.write({ type: 'request-status', id: request.id, status: 'closed' });
    return;
  }
  const parent = request.parent !== null ? d.state.requests.find((r) => r.id === request.parent) : undefined;
  const outer = parent && awaits(parent, request.requester) ? parent : undefined;
  removeWhere(d, (ask) => ask.reason === 'resume' && ask.resume?.id === request.id);
  d.set({
    queue: [
      ...d.state.queue,
      {
        id: d.state.nextAsk,
        agent: d.agent(request.requester) ?? request.requester,
        reason: 'resume',
        about: d.state.seq,
        author: request.requester,
        questions: [],
        requests: outer ? [outer.id] : [],
        audience: request.opener.audience,
        root: request.opener.root,
        trace: request.opener.trace,
        fromAgent: false,
        attempt: 0,
        resume: request,
      },
    ],
    nextAsk: d.state.nextAsk + 1,
  });
}

/**
 * Rule 5.6: control goes to the humans here (or an operator acts). Requests this room opened are cancelled, here
 * and elsewhere; requests waiting here whose requester waits in another room expire at once (it resumes).
 */
export function closeRequests(d: Draft): void {
  for (const request of [...d.state.requests]) {
    settle(d, request, request.origin === d.setup.key ? 'cancelled' : 'expired');
  }
  const byTarget = new Map<string, number[]>();
  for (const away of d.state.away) byTarget.set(away.target, [...(byTarget.get(away.target) ?? []), away.id]);
  for (const [room, ids] of byTarget) d.note(room, { kind: 'cancel-requests', ids });
  d.set({ away: [] });
}

/**
 * The origin room cancelled these requests (5.6). Those nested in them go too: the ones waiting here, and the ones
 * this room's agents opened elsewhere (their rooms are told, and cancel what is nested in them in turn).
 */
export function cancelRequests(d: Draft, ids: readonly number[]): void {
  const cancelled = new Set(ids);
  for (let grew = true; grew; ) {
    const nested = [...d.state.requests, ...d.state.away].filter(
      (r) => !cancelled.has(r.id) && r.parent != null && cancelled.has(r.parent),
    );
    for (const r of nested) cancelled.add(r.id);
    grew = nested.length > 0;
  }
  for (const request of d.state.requests.filter((r) => cancelled.has(r.id))) settle(d, request, 'cancelled');
  const away = d.state.away.filter((a) => cancelled.has(a.id));
  if (away.length === 0) return;
  d.set({ away: d.state.away.filter((a) => !cancelled.has(a.id)) });
  for (const room of new Set(away.map((a) => a.target))) {
    const ids = away.filter((a) => a.target === room).map((a) => a.id);
    d.note(room, { kind: 'cancel-requests', ids });
  }
}

const shortNames = (list: readonly string[]) => list.map((n) => `@${n}`).join(', ');

/** Rule 5.4: the line when a request reaches its deadline with participants who did not answer. */
export function deadlineLine(request: OpenRequest): string {
  const late = pending(request).map((p) => p.name);
  return `Request #${request.id} from @${request.requester} reached its deadline: ${shortNames(late)} did not answer in time; @${request.requester} goes on without ${late.length === 1 ? 'it' : 'them'}.`;
}

/** What the requester reads when it resumes: every answer, passes noted, and who did not answer. */
export function resumeSummary(request: SettledRequest): string {
  const said = (a: RequestAnswer) => {
    switch (a.outcome) {
      case 'pass':
        return `- @${a.participant} passed (nothing to add)`;
      case 'answer':
        return `- @${a.participant}: ${nested(a.text)}`;
      case 'stopped':
        return `- @${a.participant} was stopped by an operator (no answer)`;
      default:
        return undefined;
    }
  };
  const lines = request.answers.map(said).filter((line): line is string => line !== undefined);
  const failed = request.answers.filter((a) => a.outcome === 'failed');
  const stopped = request.answers.filter((a) => a.outcome === 'stopped');
  const missing = pending(request).map((p) => `@${p.name}`);
  const head =
    request.status === 'expired'
      ? `Your request #${request.id} reached its deadline before everyone answered.`
      : failed.length + stopped.length > 0
        ? `Your request #${request.id} is settled, but not everyone could answer.`
        : `Everyone you asked in request #${request.id} has answered.`;
  return [
    head,
    `You asked: ${nested(request.text)}`,
    'Answers:',
    ...(lines.length > 0 ? lines : ['- (none)']),
    ...(failed.length > 0
      ? [`Could not answer: ${failed.map((a) => `@${a.participant} (${oneLine(a.text)})`).join(', ')}`]
      : []),
    ...(missing.length > 0 ? [`Did not answer: ${missing.join(', ')}`] : []),
    'Continue from here: use these answers in your reply.',
  ].join('\n');
}
