/**
 * Rule 17: approvals. A tool call an agent file marks `ask` waits, as room state, for a person to approve it: the
 * human whose message started the turn (the causal root) or an operator — never an agent, a bot or another member.
 * The card shows exactly what will run; the approval binds those arguments (another call is another card). An
 * unanswered card is a denial after the approval timeout; `/pass` and `/reset` deny every card of the room. A turn
 * taken again after a restart that makes the same call finds its card (approved already, or still waiting).
 */
import { type Draft, same } from './draft.js';
import type { ApprovalRequest, Command } from './events.js';
import type { PendingApproval, RoomState, Root, Turn } from './state.js';

/** A card's tool for a model call held by its price (an agent's spend_threshold_usd, or SPEND_AT_LIMIT=ask). */
export const MODEL_CALL = 'model call';

/** The default wait before an unanswered card is a denial (APPROVAL_TIMEOUT_S). */
export const APPROVAL_TIMEOUT_MS = 30 * 60_000;

const pendings = (d: Draft): readonly PendingApproval[] => d.state.approvals ?? [];

/**
 * The human an ask acts for: the one its chain started with (a request or resume carries it), else the one human its
 * questions are from (their id known). Who may approve its calls, besides operators.
 */
export function rootOf(ask: Turn): Root | undefined {
  if (ask.root) return ask.root;
  const humans = ask.questions.filter((q, i, all) => all.findIndex((o) => same(o.human, q.human)) === i);
  const only = humans.length === 1 ? humans[0] : undefined;
  return only?.id !== undefined ? { id: only.id, name: only.human } : undefined;
}

function result(d: Draft, token: string, approved: boolean, reason: string): void {
  d.effect({ type: 'approval-result', token, approved, reason });
}

function record(d: Draft, a: PendingApproval, status: 'approved' | 'denied' | 'expired', by?: string): void {
  d.record({ kind: 'approval', id: a.id, agent: a.agent, tool: a.tool, status, ...(by ? { by } : {}) });
}

const minutes = (ms: number) => Math.max(1, Math.round(ms / 60_000));

/** The card's first lines: what waits, and exactly what would run. */
function cardHead(a: PendingApproval): string[] {
  return [
    `Approval needed [${a.id}]: @${a.agent} wants to ${a.tool === MODEL_CALL ? 'make a model call' : `run ${a.tool}`}:`,
    '```',
    a.input.replace(/```/g, '`\u200b``'),
    '```',
  ];
}

/** An answered card, as its message reads once closed (without buttons). */
function closeCard(d: Draft, a: PendingApproval, outcome: string): void {
  if (a.platformId === undefined) return;
  const text = [...cardHead(a), outcome].join('\n').replace(/^Approval needed/, 'Approval');
  d.effect({ type: 'close-card', platformId: a.platformId, text });
}

/**
 * The card's message is on the platform: kept with its card, to close once answered. A card answered before its
 * message was confirmed (a quick click) is closed now: approved, or gone (denied, expired, its turn over).
 */
export function cardPosted(d: Draft, post: number, text: string, platformIds: readonly string[]): void {
  const platformId = platformIds[0];
  if (platformId === undefined) return;
  const a = pendings(d).find((p) => p.post === post);
  if (a?.status === 'waiting') {
    d.set({ approvals: pendings(d).map((p) => (p === a ? { ...p, platformId } : p)) });
    return;
  }
  const outcome = a?.status === 'approved' ? `Approved by ${a.by}.` : a?.reason ? `Denied: ${a.reason}.` : 'Answered.';
  const head = text
    .split('\n')
    .slice(0, -1)
    .join('\n')
    .replace(/^Approval needed/, 'Approval');
  d.effect({ type: 'close-card', platformId, text: `${head}\n${outcome}` });
}

function card(a: PendingApproval, timeoutMs: number): string {
  const who = a.operatorsOnly
    ? `${a.operatorsOnly}, so an operator may answer`
    : a.root
      ? `Asked for by @${a.root.name}: @${a.root.name} or an operator may answer`
      : 'No one person asked for it: an operator may answer';
  return [
    ...cardHead(a),
    `${who} with /approve ${a.id} or /deny ${a.id} (it is denied in ${minutes(timeoutMs)} minutes otherwise).`,
  ].join('\n');
}

/** A tool call the turn runner holds: a card, or the answer it has already. */
export function requestApproval(d: Draft, r: ApprovalRequest): void {
  const current = d.state.current;
  if (!current || current.ask.id !== r.ask || current.stop) {
    result(d, r.token, false, 'the turn is over');
    return;
  }
  if (r.tooLong) {
    d.line(`@${r.agent} wanted to run ${r.tool}, but the call is too long to show in full, so it cannot be approved.`);
    result(d, r.token, false, 'the call is too long to show on an approval card; make it shorter');
    return;
  }
  const same = pendings(d).find(
    (a) => a.ask === r.ask && a.agent === r.agent && a.tool === r.tool && a.input === r.input,
  );
  if (same?.status === 'denied') {
    // Denied while the turn waited in the queue: the turn taken again reads the denial.
    d.set({ approvals: pendings(d).filter((a) => a !== same) });
    result(d, r.token, false, same.reason ?? 'it was denied');
    return;
  }
  if (same?.status === 'approved') {
    // Approved already (the turn taken again after a restart makes the call again): it runs, once.
    d.set({ approvals: pendings(d).filter((a) => a !== same) });
    result(d, r.token, true, 'approved');
    return;
  }
  if (same) {
    d.set({ approvals: pendings(d).map((a) => (a === same ? { ...a, token: r.token } : a)) });
    return;
  }
  const timeoutMs = d.setup.approvalTimeoutMs ?? APPROVAL_TIMEOUT_MS;
  const number = d.state.nextApproval ?? 1;
  const root = rootOf(current.ask);
  const approval: PendingApproval = {
    id: `A${number}`,
    ask: r.ask,
    agent: r.agent,
    tool: r.tool,
    input: r.input,
    token: r.token,
    ...(root ? { root } : {}),
    ...(r.operatorsOnly ? { operatorsOnly: r.operatorsOnly } : {}),
    at: d.now,
    expiresAt: d.now + timeoutMs,
    status: 'waiting',
  };
  const posted = d.post({ agent: null, text: card(approval, timeoutMs), purpose: 'line', card: { id: approval.id } });
  d.set({ approvals: [...pendings(d), { ...approval, post: posted.id }], nextApproval: number + 1 });
  d.record({ kind: 'approval', id: approval.id, agent: r.agent, tool: r.tool, status: 'asked', by: root?.name });
  d.effect({ type: 'approval-timer', at: approval.expiresAt, id: approval.id });
}

/** `/approve <id>` and `/deny <id>`: its answer. Only the card's root or an operator. */
export function answerApproval(d: Draft, c: Command): string {
  const id = c.args
    .trim()
    .replace(/^\[|\]$/g, '')
    .toUpperCase();
  const waiting = pendings(d).filter((a) => a.status === 'waiting');
  if (!id) {
    return waiting.length === 0
      ? 'No approval is waiting here.'
      : `Waiting here: ${waiting.map((a) => `${a.id} (@${a.agent}, ${a.tool})`).join(', ')}. Use /${c.name} <id>.`;
  }
  const approval = waiting.find((a) => a.id === id);
  if (!approval) return `No approval ${id} is waiting here.`;
  const isRoot =
    !approval.operatorsOnly && approval.root !== undefined && c.userId !== undefined && c.userId === approval.root.id;
  if (!c.isOperator && !isRoot) {
    return approval.root && !approval.operatorsOnly
      ? `Only @${approval.root.name} (who asked) or an operator can answer ${approval.id}.`
      : `Only an operator can answer ${approval.id}.`;
  }
  if (c.name === 'approve') {
    const approved = { ...approval, status: 'approved' as const, by: c.user };
    d.set({ approvals: pendings(d).map((a) => (a === approval ? approved : a)) });
    d.line(`${c.user} approved ${approval.id}: @${approval.agent} runs it.`);
    closeCard(d, approval, `Approved by ${c.user}.`);
    record(d, approval, 'approved', c.user);
    result(d, approval.token, true, `approved by ${c.user}`);
    return `${approval.id} approved.`;
  }
  settleDenied(d, approval, `${c.user} denied it`);
  d.line(`${c.user} denied ${approval.id}: @${approval.agent} does not run it.`);
  closeCard(d, approval, `Denied by ${c.user}.`);
  record(d, approval, 'denied', c.user);
  result(d, approval.token, false, `${c.user} denied it`);
  return `${approval.id} denied.`;
}

/**
 * A card denied (by a person or its deadline): gone when its turn is being written (the call reads the denial now);
 * kept as denied while its turn waits in the queue, so the turn taken again reads the denial instead of a new card.
 */
function settleDenied(d: Draft, approval: PendingApproval, reason: string): void {
  const writing = d.state.current?.ask.id === approval.ask;
  d.set({
    approvals: writing
      ? pendings(d).filter((a) => a !== approval)
      : pendings(d).map((a) => (a === approval ? { ...a, status: 'denied' as const, reason } : a)),
  });
}

/** Whether an ask's turn waits for a card (rule 17.5): it is not taken until the card is answered. */
export function waitsForCard(d: Draft, ask: number): boolean {
  return parkedBehindCard(d.state, ask);
}

/** The same, of a room's state: an ask parked behind its card is no work the room can do now. */
export function parkedBehindCard(state: Pick<RoomState, 'approvals'>, ask: number): boolean {
  return (state.approvals ?? []).some((a) => a.ask === ask && a.status === 'waiting');
}

/**
 * Rule 17.5: a turn waiting for a card gives the room to the next question that can run: it is stopped and goes back
 * to the head of the queue, taken again (with its journal) once its card is answered. Its attempts are not counted.
 */
export function parkWaiting(d: Draft): void {
  const current = d.state.current;
  if (!current || current.post !== undefined || current.stop || d.state.holding) return;
  if (!waitsForCard(d, current.ask.id)) return;
  if (!d.state.queue.some((q) => !q.held && !waitsForCard(d, q.id))) return;
  const { ask } = current;
  d.effect({ type: 'stop', ask: ask.id, reason: 'approval' });
  d.effect({ type: 'discard', ask: ask.id });
  d.set({ current: null, queue: [{ ...ask, attempt: ask.attempt - 1, parked: true }, ...d.state.queue] });
}

/** An approval's deadline: still waiting, it is a denial. */
export function expireApproval(d: Draft, id: string): void {
  const approval = pendings(d).find((a) => a.id === id && a.status === 'waiting');
  if (!approval) return;
  settleDenied(d, approval, 'nobody approved it in time');
  d.line(`Nobody answered ${approval.id} in time: @${approval.agent} does not run it.`);
  closeCard(d, approval, 'Denied: nobody answered in time.');
  record(d, approval, 'expired');
  result(d, approval.token, false, 'nobody approved it in time');
}

/** `/pass`, `/reset`: every card of the room is denied (its turn is stopped too). */
export function denyAll(d: Draft, why: string): number {
  const all = pendings(d);
  for (const a of all) {
    if (a.status !== 'waiting') continue;
    result(d, a.token, false, why);
    record(d, a, 'denied', why);
    closeCard(d, a, `Denied: ${why}.`);
  }
  if (all.length > 0) d.set({ approvals: [] });
  return all.filter((a) => a.status === 'waiting').length;
}

/**
 * A turn that ended takes its cards with it: only the turn being written and the asks waiting to be taken again (a
 * turn a restart cut) keep theirs. A turn answered, cut by restarts too often, stopped before a restart or replaced
 * while it waited (its human's newer message) leaves no card anyone can approve.
 */
export function endApprovals(d: Draft): void {
  const all = pendings(d);
  if (all.length === 0) return;
  const current = d.state.current;
  const live = (ask: number) =>
    (current?.ask.id === ask && current.post === undefined) || d.state.queue.some((q) => q.id === ask);
  if (!all.some((a) => !live(a.ask))) return;
  for (const a of all) if (!live(a.ask) && a.status === 'waiting') closeCard(d, a, 'Closed: its turn is over.');
  d.set({ approvals: all.filter((a) => live(a.ask)) });
}

/** After a restart, the cards still waiting get their deadlines again. */
export function rearmApprovals(d: Draft): void {
  for (const a of pendings(d)) {
    if (a.status === 'waiting') d.effect({ type: 'approval-timer', at: a.expiresAt, id: a.id });
  }
}
