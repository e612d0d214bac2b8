/**
 * The room as one decision: `decide(setup, state, event, context) → { state, effects, writes }`. Pure: no clock,
 * store, timer or I/O; time and fresh ids come in. Every rule of docs/routing.md is applied here or in the modules
 * it calls; the shell (src/bridge) stores the writes, carries out the effects and feeds their outcomes back.
 */
import { mayWake, outsider, tellRefused } from './access.js';
import { withAddressed } from './addressed.js';
import { endApprovals, expireApproval, rearmApprovals, requestApproval } from './approvals.js';
import { askHuman, joinDrops } from './asks.js';
import { chatAction, chatExpired, rearmChats } from './chats.js';
import { command } from './commands.js';
import { tellDropped } from './control.js';
import { Draft, same } from './draft.js';
import { newlyAddressed } from './edits.js';
import type { DecideContext, Decision } from './effects.js';
import type { Action, BatchAnswer, Edit, Incoming, Note, Participant, RoomEvent } from './events.js';
import { finishTurn, onPosted } from './outcomes.js';
import { canSee } from './privacy.js';
import { recordMessage } from './reading.js';
import { interruptedLine, tooOftenCutLine } from './recovery.js';
import { answerRequest, cancelRequests, deadlineLine, onSettled, pending, settle } from './requests.js';
import { routeAgent, routeHuman } from './routing.js';
import { advance } from './schedule.js';
import type { Dropped, RoomSetup, RoomState } from './state.js';
import { extractMentions } from './text/mentions.js';

/** A turn cut by restarts this many times is not taken again (rule 12.2). */
export const MAX_TURN_ATTEMPTS = 3;

/** Marks an edit's stored text, so the agents read it as a correction of the message above, not a repeat. */
export const EDITED_PREFIX = '(edited) ';

export function decide(setup: RoomSetup, state: RoomState, event: RoomEvent, context: DecideContext): Decision {
  const d = new Draft(setup, state, event.now, context);
  switch (event.type) {
    case 'message':
      message(d, event.message);
      break;
    case 'edit':
      edit(d, event.edit);
      break;
    case 'answer':
      if (d.state.current?.ask.id === event.ask) finishTurn(d, event.outcome);
      break;
    case 'approval':
      requestApproval(d, event.request);
      break;
    case 'approval-expired':
      expireApproval(d, event.id);
      break;
    case 'batch':
      batch(d, event.answers);
      break;
    case 'posted':
      onPosted(d, event.post, event.platformIds);
      break;
    case 'post-failed':
      onPosted(d, event.post, [], event.reason);
      break;
    case 'action':
      action(d, event.action);
      break;
    case 'deadline':
      deadline(d, event.request);
      break;
    case 'chat-expired':
      chatExpired(d, event.chat);
      break;
    case 'command':
      command(d, event.command);
      break;
    case 'note':
      // Taking a note removes its stored copy in the same commit (a note taken already makes it a duplicate).
      if (event.id !== undefined) d.write({ type: 'note-done', id: event.id });
      note(d, event.note);
      break;
    case 'catch-up':
      catchUp(d, event.phase);
      break;
    case 'restart':
      restart(d, event.cut);
      break;
  }
  advance(d);
  endApprovals(d);
  return d.done();
}

function message(d: Draft, incoming: Incoming): void {
  if (incoming.missed) d.set({ holding: true });
  if (incoming.kind === 'human' && d.setup.kind === 'pair') return; // nobody but the two agents speaks there
  const recorded = recordMessage(d, {
    author: incoming.author,
    authorId: incoming.authorId,
    kind: incoming.kind,
    text: incoming.text,
    files: incoming.files,
    platformIds: incoming.platformIds,
    at: incoming.at,
    addressed: incoming.kind === 'human' ? incoming.addressed : undefined,
    outsider: incoming.kind === 'human' && outsider(incoming),
  });
  if (incoming.kind === 'human') {
    const author = { id: incoming.authorId, mayWake: incoming.mayWake, refused: incoming.refused };
    routeHuman(d, recorded.facts, incoming.text, incoming.missed === true, author, incoming.trace);
  } else if (incoming.kind === 'agent')
    routeAgent(d, recorded.facts, incoming.text, { noProgress: recorded.noProgress });
}

/**
 * Rule 13: a human's edit that newly mentions agents soon after its message asks them, as a message of its own.
 * Agents' edits (streamed replies) and the bridge's are never requests. Only in a room: a DM's message already asked
 * its agent, and nobody else is asked there (2.2.1).
 */
function edit(d: Draft, e: Edit): void {
  if (e.kind !== 'human' || d.setup.kind !== 'room') return;
  const names = d.setup.agents.map((a) => a.name);
  const addressed = newlyAddressed({
    addressing: withAddressed(extractMentions(e.text, names), e.addressed, names),
    addressedBefore: e.addressedBefore,
    originalAt: e.originalAt,
    editedAt: e.at,
    windowMs: d.setup.editWindowMs,
  });
  // Rule 16: an edit wakes only the agents its author may wake.
  const wake = addressed.filter((agent) => mayWake(e, agent));
  const refused = addressed.filter((agent) => !wake.includes(agent));
  if (refused.length > 0) tellRefused(d, { id: e.authorId, name: e.author }, e.refused ?? 'user', refused);
  if (wake.length === 0) return;
  const { facts } = recordMessage(d, {
    author: e.author,
    authorId: e.authorId,
    kind: 'human',
    text: EDITED_PREFIX + e.text,
    platformIds: e.platformIds,
    at: e.at,
    mentions: wake,
  });
  let drops: Dropped[] = [];
  const asked: string[] = [];
  for (const agent of wake) {
    if (!canSee(agent, facts)) continue;
    asked.push(`${agent}:addressed`);
    const dropped = askHuman(d, {
      agent,
      reason: 'addressed',
      about: facts.seq,
      author: facts.author,
      questions: [{ human: facts.author, seq: facts.seq, id: e.authorId }],
      audience: facts.audience,
      fromAgent: false,
      trace: e.trace,
    });
    if (dropped) drops = joinDrops(drops, [dropped]);
  }
  d.record({
    kind: 'routed',
    seq: facts.seq,
    author: facts.author,
    woken: asked,
    ...(e.trace !== undefined ? { trace: e.trace } : {}),
  });
  tellDropped(d, drops, 'Too many questions waiting');
}

/** Part of a batched call answered: its answers are applied in configured order by the scheduler. */
function batch(d: Draft, answers: ReadonlyArray<{ ask: number; answer: BatchAnswer }>): void {
  const batch = d.state.batch;
  if (!batch) return;
  const fresh = answers
    .filter((a) => batch.asks.some((ask) => ask.id === a.ask) && !batch.answers.some((b) => b.ask === a.ask))
    .map((a) => ({ ask: a.ask, answer: a.answer }));
  d.set({ batch: { ...batch, answers: [...batch.answers, ...fresh] } });
}

/**
 * Rule 5.1: whom an action awaits, from the names its agent gave: each participant once, never the requester; a
 * configured agent's name (any case) is that agent, in its configured spelling; any other name is a human's.
 */
function participants(d: Draft, names: readonly string[], requester: string): Participant[] {
  const out: Participant[] = [];
  for (const raw of names) {
    const agent = d.agent(raw);
    const name = agent ?? raw;
    if (same(name, requester) || out.some((p) => same(p.name, name))) continue;
    out.push({ name, kind: agent ? 'agent' : 'human' });
  }
  return out;
}

function action(d: Draft, a: Action): void {
  if (a.kind !== 'post') {
    chatAction(d, a);
    return;
  }
  if (a.roomsOnly && d.setup.kind !== 'room') {
    d.effect({ type: 'action-result', call: a.call, result: { kind: 'private-room' } });
    return;
  }
  if (a.fresh) d.set({ control: { holder: 'agents', count: 0 } });
  const control = d.state.control;
  if (control.holder === 'humans') {
    d.effect({
      type: 'action-result',
      call: a.call,
      result: { kind: 'refused', reason: control.reason ?? 'the humans have control' },
    });
    return;
  }
  const awaited = participants(d, a.requestReply, a.from.agent);
  d.post({
    agent: a.from.agent,
    text: a.text,
    purpose: 'action',
    call: a.call,
    ...(a.from.trace !== undefined ? { trace: a.from.trace } : {}),
    requests: [],
    ...(awaited.length > 0
      ? {
          open: {
            awaited,
            requester: a.from.agent,
            origin: a.from.room,
            parent: a.from.requests[0] ?? null,
            opener: { people: a.from.people, audience: a.from.audience, root: a.from.root, trace: a.from.trace },
          },
        }
      : {}),
  });
}

/** Rule 5.4: a request's deadline. */
function deadline(d: Draft, id: number): void {
  const request = d.state.requests.find((r) => r.id === id);
  if (!request) return;
  const current = d.state.current;
  if (current?.ask.requests.includes(id) && current.post === undefined) {
    const ask = current.ask;
    if (ask.requests.length === 1 && ask.questions.length === 0) {
      d.effect({ type: 'stop', ask: ask.id, reason: 'deadline' });
      d.set({ current: { ...current, stop: 'deadline' } });
    } else {
      d.set({ current: { ...current, ask: { ...ask, requests: ask.requests.filter((r) => r !== id) } } });
    }
  }
  if (pending(request).length > 0) d.line(deadlineLine(request));
  settle(d, request, 'expired');
}

function note(d: Draft, n: Note): void {
  switch (n.kind) {
    case 'request-opened':
      if (!d.state.away.some((a) => a.id === n.id)) {
        d.set({ away: [...d.state.away, { id: n.id, target: n.target, parent: n.parent ?? null }] });
      }
      return;
    case 'request-settled':
      onSettled(d, n.request);
      return;
    case 'cancel-requests':
      cancelRequests(d, n.ids);
      return;
  }
}

/** Rule 11: a catch-up starts (the asks of what it fetches wait) or is done (they run, one line for drops). */
function catchUp(d: Draft, phase: 'start' | 'done'): void {
  if (phase === 'start') {
    d.set({ holding: true });
    return;
  }
  const drops = d.state.heldDrops;
  d.set({
    holding: false,
    heldDrops: [],
    queue: d.state.queue.map((ask) => (ask.held ? { ...ask, held: false } : ask)),
  });
  tellDropped(d, drops, 'Too many questions waiting while the bridge was away');
}

/** Rule 12: after a restart, the turn being written is taken again, unsent posts go out, deadlines are set again. */
function restart(
  d: Draft,
  cut: { ask: number; runs: ReadonlyArray<{ tool: string; input: string | null; cut: boolean }> } | undefined,
): void {
  for (const post of d.state.posts) d.effect({ type: 'post', post, resend: true });
  for (const request of d.state.requests) d.effect({ type: 'timer', at: request.deadline, request: request.id });
  rearmApprovals(d);
  rearmChats(d);
  const batch = d.state.batch;
  if (batch) {
    // A batched call cut by the restart is asked again: its observers not answered yet go back to the queue's head.
    const waiting = batch.asks.filter((ask) => !batch.answers.some((a) => a.ask === ask.id));
    const answered = batch.asks.filter((ask) => !waiting.includes(ask));
    d.set({ batch: answered.length > 0 ? { ...batch, asks: answered } : null, queue: [...waiting, ...d.state.queue] });
  }
  const current = d.state.current;
  if (current && current.post === undefined) {
    const ask = current.ask;
    d.set({ current: null });
    if (current.stop === 'operator') {
      // Its outcome will never come: the operator's stop is recorded now (3.5).
      for (const id of ask.requests) {
        answerRequest(d, id, { participant: ask.agent, text: 'was stopped by an operator', outcome: 'stopped' });
      }
    } else if (current.stop) {
      // Already over (its deadline, a hand-back): nothing to take again, nothing cut to tell.
    } else if (ask.attempt >= MAX_TURN_ATTEMPTS) {
      for (const id of ask.requests) {
        answerRequest(d, id, { participant: ask.agent, text: 'its turn was cut by restarts', outcome: 'failed' });
      }
      d.line(tooOftenCutLine(ask.agent, ask.attempt));
    } else {
      // Taken again first, unless what was missed meanwhile supersedes it (a newer message from the same human).
      d.set({ queue: [ask, ...d.state.queue] });
      const runs = cut?.ask === ask.id ? cut.runs : [];
      if (runs.length > 0) {
        d.line(
          interruptedLine(
            ask.agent,
            runs.map((r) => ({ tool: r.tool, input: r.input, status: r.cut ? 'started' : 'ok' })),
          ),
        );
      }
    }
  }
  // Until the catch-up is done (what was missed may supersede them), the asks wait.
  d.set({ holding: true, queue: d.state.queue.map((ask) => ({ ...ask, held: true })) });
}
