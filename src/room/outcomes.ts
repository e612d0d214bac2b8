/**
 * Rule 3: how a turn ended, and what its reply does once posted (rule 4) — and the bridge's own lines and the
 * actions' posts once the platform has them.
 */
import { cardPosted } from './approvals.js';
import { isObserver, removeWhere } from './asks.js';
import { acceptedChat } from './chats.js';
import { handBack } from './control.js';
import type { Draft } from './draft.js';
import type { ActionResult } from './effects.js';
import type { SpendLimitReached, ToolRun, TurnOutcome } from './events.js';
import { recordMessage } from './reading.js';
import { answerRequest, openRequest } from './requests.js';
import { routeAgent } from './routing.js';
import type { Current, PendingPost, Turn } from './state.js';
import { classifyReply, worldPassText } from './text/replies.js';

const toolRoundsLine = (agent: string, rounds: number) =>
  `@${agent} stopped after ${rounds} tool rounds; control is back with the humans.`;

/** The requests an ask answers record how its turn ended (an answer is recorded when its reply is posted). */
function settleAsk(d: Draft, ask: Turn, outcome: 'pass' | 'failed' | 'stopped', text = ''): void {
  for (const id of ask.requests) answerRequest(d, id, { participant: ask.agent, text, outcome });
}

/** The current turn ends without a post. */
function endTurn(d: Draft, ask: Turn): void {
  d.effect({ type: 'discard', ask: ask.id });
  d.set({ current: null });
}

/** Rule 3: the current turn's outcome. */
export function finishTurn(d: Draft, outcome: TurnOutcome): void {
  const current = d.state.current;
  if (!current) return;
  const { ask } = current;
  if (current.stop || outcome.kind === 'stopped') {
    endTurn(d, ask);
    if (current.stop === 'operator' || (!current.stop && outcome.kind === 'stopped')) {
      d.record({ kind: 'stopped', agent: ask.agent, reason: 'operator', about: ask.about });
      settleAsk(d, ask, 'stopped', 'was stopped by an operator');
    }
    return;
  }
  if (outcome.kind === 'failed') {
    endTurn(d, ask);
    d.record({ kind: 'failed', agent: ask.agent, reason: outcome.reason, about: ask.about });
    d.set({ failed: [...d.state.failed, ask.agent] });
    settleAsk(d, ask, 'failed', outcome.reason);
    d.line(`@${ask.agent} could not answer: ${outcome.reason}`);
    return;
  }
  if (outcome.kind === 'over-limit') {
    overLimit(d, ask, outcome.limit);
    return;
  }
  if (d.state.control.holder === 'humans') {
    endTurn(d, ask); // control went to the humans while it wrote
    return;
  }
  reply(d, current, outcome.text, outcome.roundLimit === true, outcome.toolRuns);
}

/**
 * Rule 15: a turn stopped by a spending limit posts nothing; its requests record that it is over its limit (so
 * nobody waits for it); the room is told once per limit and day who stays silent, until when, and how to raise it.
 */
function overLimit(d: Draft, ask: Turn, limit: SpendLimitReached): void {
  endTurn(d, ask);
  d.record({ kind: 'failed', agent: ask.agent, reason: 'over its spending limit', about: ask.about });
  settleAsk(d, ask, 'failed', 'over its spending limit');
  const key = `spend:${limit.key}`;
  if (d.state.told.includes(key)) return;
  d.set({ told: [...d.state.told, key].slice(-TOLD_KEPT) });
  d.line(spendLine(limit));
}

/** Lines about spending limits and pairs the room was told (kept this many). */
const TOLD_KEPT = 50;

export function spendLine(limit: SpendLimitReached): string {
  const until = `until ${limit.until}`;
  switch (limit.scope) {
    case 'agent':
      return `@${limit.agent} has reached its spending limit (${limit.amount} a day) and stays silent ${until}. An operator can raise it with /budget agent ${limit.agent} <dollars>.`;
    case 'room':
      return `The agents have reached this room's spending limit (${limit.amount} a day) and stay silent here ${until}. An operator can raise it with /budget room <dollars>.`;
    default:
      return `The agents have reached the bridge's spending limit (${limit.amount} a day) and stay silent ${until}. An operator can raise it with /budget bridge <dollars>.`;
  }
}

/** Rule 3.1: the current ask passed (its reply, or a batched call's answer): nothing is posted. */
export function passTurn(d: Draft, ask: Turn): void {
  endTurn(d, ask);
  d.record({ kind: 'passed', agent: ask.agent, about: ask.about });
  settleAsk(d, ask, 'pass');
}

/** A written reply (a turn's, or a batched call's answer for the current ask). */
export function reply(
  d: Draft,
  current: Current,
  text: string,
  roundLimit: boolean,
  toolRuns?: readonly ToolRun[] | undefined,
): void {
  const { ask } = current;
  const outcome = classifyReply(text);
  if (ask.reason === 'chat-request' && !(ask.chat && acceptedChat(d.state, ask.chat.id))) {
    endTurn(d, ask); // declined or undecided: nothing it wrote is shown
    return;
  }
  if (roundLimit) {
    const said = outcome.kind === 'pass' ? '' : outcome.text;
    if (!said) {
      endTurn(d, ask);
      handBack(d, 'tool round limit', toolRoundsLine(ask.agent, d.setup.maxToolRounds), ask.startedAt ?? d.state.seq);
      return;
    }
    post(d, current, said, 'round-limit', toolRuns);
    return;
  }
  if (outcome.kind === 'pass') {
    passTurn(d, ask);
    return;
  }
  if (outcome.kind === 'world-pass') {
    if (outcome.text) {
      post(d, current, outcome.text, 'world-pass', toolRuns);
      return;
    }
    endTurn(d, ask);
    handBack(d, 'world pass', worldPassText(ask.agent), ask.startedAt ?? d.state.seq);
    return;
  }
  post(d, current, outcome.text, 'route', toolRuns);
}

function post(
  d: Draft,
  current: Current,
  text: string,
  after: NonNullable<Current['after']>,
  toolRuns: readonly ToolRun[] | undefined,
): void {
  const { ask } = current;
  const written = d.post({
    agent: ask.agent,
    text,
    ...(toolRuns && toolRuns.length > 0 ? { toolRuns } : {}),
    ask: ask.id,
    ...(ask.trace !== undefined ? { trace: ask.trace } : {}),
    purpose: 'reply',
    // A world pass and a reply cut by the tool-round limit ask nobody: control goes to the humans right after.
    ...(after !== 'route' ? { requests: [] } : {}),
    audience: ask.audience,
    people: ask.people ?? [],
  });
  d.set({ current: { ...current, post: written.id, after } });
}

/** A post reached the platform (`platformIds`) — or was refused (`failed`): it is recorded and followed up. */
export function onPosted(d: Draft, id: number, platformIds: readonly string[], failed?: string): void {
  const posted = d.state.posts.find((p) => p.id === id);
  if (!posted) return;
  d.set({ posts: d.state.posts.filter((p) => p.id !== id) });
  if (posted.purpose === 'line') {
    if (posted.card) cardPosted(d, id, posted.text, platformIds);
    // A line the platform refused is still part of the history the agents read.
    recordMessage(d, {
      author: 'system',
      authorId: 'system',
      kind: 'system',
      text: posted.text,
      platformIds,
      at: d.now,
      post: id,
    });
    return;
  }
  if (posted.purpose === 'action') {
    actionPosted(d, posted, platformIds, failed);
    return;
  }
  const current = d.state.current?.post === id ? d.state.current : null;
  const ask = current?.ask;
  if (failed !== undefined) {
    if (current) d.set({ current: null });
    handBack(
      d,
      'post failed',
      `@${posted.agent}'s reply could not be posted: ${failed}`,
      ask?.startedAt ?? d.state.seq,
    );
    return;
  }
  const { facts, noProgress } = recordMessage(d, {
    author: posted.agent ?? 'system',
    authorId: posted.agent ?? 'system',
    kind: 'agent',
    text: posted.text,
    platformIds,
    at: d.now,
    requests: posted.requests,
    answering: posted.people,
    exchange: posted.audience,
    post: id,
    toolRuns: posted.toolRuns,
  });
  if (!current || !ask) {
    routeAgent(d, facts, posted.text, { noProgress }); // its turn was stopped meanwhile: plain talk
    return;
  }
  d.set({ current: null });
  if (isObserver(ask)) {
    // The first observer that posts ends its round: the others are not asked (observers of newer messages are).
    removeWhere(d, (queued) => isObserver(queued) && queued.about <= ask.about);
    const batch = d.state.batch;
    if (batch) {
      d.effect({ type: 'stop', ask: batch.id, reason: 'control' }); // the rest of the batched call is withdrawn
      d.set({ batch: null });
    }
  }
  const since = ask.startedAt ?? facts.seq;
  if (current.after !== 'route') {
    // A posted reply answers the ask's requests, even when control goes to the humans right after (3.3, 3.6).
    for (const id of ask.requests)
      answerRequest(d, id, { participant: ask.agent, text: posted.text, outcome: 'answer' });
  }
  if (current.after === 'world-pass') {
    if (d.state.control.holder === 'agents') handBack(d, 'world pass', worldPassText(ask.agent), since);
    return;
  }
  if (current.after === 'round-limit') {
    handBack(d, 'tool round limit', toolRoundsLine(ask.agent, d.setup.maxToolRounds), since);
    return;
  }
  routeAgent(d, facts, posted.text, { ask, noProgress });
}

function actionPosted(d: Draft, posted: PendingPost, platformIds: readonly string[], failed?: string): void {
  const result = (value: ActionResult) => {
    if (posted.call) d.effect({ type: 'action-result', call: posted.call, result: value });
  };
  if (failed !== undefined) {
    result({ kind: 'failed', reason: failed });
    return;
  }
  const { facts, noProgress } = recordMessage(d, {
    author: posted.agent ?? 'system',
    authorId: posted.agent ?? 'system',
    kind: 'agent',
    text: posted.text,
    platformIds,
    at: d.now,
    requests: [],
    // The agents it asks for a reply see what they are asked about, whether or not its text names them.
    seenBy: posted.open?.awaited.filter((p) => p.kind === 'agent').map((p) => p.name),
    post: posted.id,
  });
  routeAgent(d, facts, posted.text, { noProgress });
  const open = posted.open;
  if (!open || d.state.control.holder === 'humans') {
    result({ kind: 'posted' });
    return;
  }
  const request = openRequest(d, { ...open, text: posted.text, seq: facts.seq });
  result({ kind: 'posted', request: request.id, awaited: request.awaited });
}
