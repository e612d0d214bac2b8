/**
 * Who is asked about a message: rule 2 for a human's message, rule 4 for an agent's.
 */
import { type Access, mayWake, outsider, tellRefused } from './access.js';
import { rootOf } from './approvals.js';
import { askHuman, busy, enqueue, isObserver, joinDrops, makeRoomForHuman, removeWhere } from './asks.js';
import { handBack, tellDropped } from './control.js';
import { type Draft, lower, same } from './draft.js';
import type { Skipped } from './effects.js';
import { PAIR_GUARD, pairKey, pairPaused } from './guards.js';
import { canSee } from './privacy.js';
import { answerRequest, humanAnswers, openRequest } from './requests.js';
import type { AgentProfile, Dropped, MessageFacts, Reason, Turn } from './state.js';
import { handBackText } from './turns.js';

function woken(
  d: Draft,
  m: MessageFacts,
  names: readonly string[],
  more: {
    readonly refused?: { readonly agents: readonly string[]; readonly why: 'user' | 'channel' } | undefined;
    readonly skipped?: readonly Skipped[];
    readonly trace?: string | undefined;
  } = {},
): void {
  const { refused, skipped, trace } = more;
  d.record({
    kind: 'routed',
    seq: m.seq,
    author: m.author,
    woken: names,
    ...(refused ? { refused } : {}),
    ...(skipped && skipped.length > 0 ? { skipped } : {}),
    ...(trace !== undefined ? { trace } : {}),
  });
}

/** The agents of a room not woken by `m`, and why (the console's "why" and the trace read it). */
function skippedBy(d: Draft, m: MessageFacts, names: readonly string[], why: (agent: string) => Skipped['why']) {
  return d.setup.agents
    .filter((a) => !same(a.name, m.author) && !names.some((n) => n.startsWith(`${a.name}:`)))
    .map((a) => ({ agent: a.name, why: why(a.name) }));
}

/** The human who wrote a message, and what the access policy says of them (rule 16). */
export interface Author extends Access {
  readonly id: string;
}

/** Rule 2: a human's message. `missed`: fetched by a catch-up (its asks wait until it is done). */
export function routeHuman(
  d: Draft,
  m: MessageFacts,
  text: string,
  missed: boolean,
  author?: Author,
  trace?: string,
): void {
  const access: Access = author ?? {};
  // Rule 16: an outsider's message is history only: it answers no agent and takes no turn from them.
  const completed = outsider(access) ? [] : humanAnswers(d, m.author, text);
  const refused: string[] = [];
  const left = (agent: string) => {
    if (completed.some((name) => same(name, agent)) || !canSee(agent, m)) return true;
    if (mayWake(access, agent)) return false;
    if (!refused.some((name) => same(name, agent))) refused.push(agent);
    return true;
  };
  if (!outsider(access)) makeRoomForHuman(d, m.author);
  const names: string[] = [];
  let drops: Dropped[] = [];
  const question = (agent: string, reason: Reason) => {
    if (names.some((n) => n.startsWith(`${agent}:`)) || left(agent)) return;
    names.push(`${agent}:${reason}`);
    const dropped = askHuman(d, {
      agent,
      reason,
      about: m.seq,
      author: m.author,
      questions: [{ human: m.author, seq: m.seq, ...(author ? { id: author.id } : {}) }],
      audience: m.audience,
      fromAgent: false,
      held: missed,
      trace,
    });
    if (dropped) drops = joinDrops(drops, [dropped]);
  };
  const { setup } = d;
  if (setup.kind === 'direct') {
    const agent = setup.directAgent ? d.agent(setup.directAgent) : undefined;
    if (agent) question(agent, 'direct');
  } else if (setup.kind === 'room') {
    for (const agent of setup.agents) {
      if (d.state.awaiting[lower(agent.name)]?.some((h) => same(h, m.author))) question(agent.name, 'awaiting');
    }
    for (const name of m.mentions) question(name, 'addressed');
    for (const agent of setup.agents) {
      if (agent.activation !== 'always' || names.some((n) => n.startsWith(`${agent.name}:`)) || left(agent.name)) {
        continue;
      }
      names.push(`${agent.name}:always`);
      enqueue(d, {
        agent: agent.name,
        reason: 'always',
        about: m.seq,
        author: m.author,
        audience: m.audience,
        fromAgent: false,
        held: missed,
        trace,
      });
    }
  }
  // Their answer came: the agents that waited for this human wait no more.
  const waits = Object.entries(d.state.awaiting);
  if (!outsider(access) && waits.some(([, humans]) => humans.some((h) => same(h, m.author)))) {
    const awaiting: Record<string, readonly string[]> = {};
    for (const [agent, humans] of waits) awaiting[agent] = humans.filter((h) => !same(h, m.author));
    d.set({ awaiting });
  }
  const why = access.refused ?? 'user';
  const skipped =
    setup.kind === 'room'
      ? skippedBy(d, m, names, (agent): Skipped['why'] => {
          if (refused.some((name) => same(name, agent))) return 'access';
          if (!canSee(agent, m)) return 'privacy';
          if (completed.some((name) => same(name, agent))) return 'answered';
          return outsider(access) ? 'access' : 'activation';
        })
      : [];
  woken(d, m, names, { refused: refused.length > 0 ? { agents: refused, why } : undefined, skipped, trace });
  if (author && refused.length > 0) tellRefused(d, { id: author.id, name: m.author }, why, refused);
  if (drops.length > 0) tellDropped(d, drops, 'Too many questions waiting');
}

/** What an agent's message answers: the ask whose reply it is, if any (an action's post answers nothing). */
export interface Replying {
  readonly ask?: Turn | undefined;
  readonly noProgress: boolean;
}

/** The last agent other than `author` to speak before `seq`. */
function previousAgent(d: Draft, author: string, seq: number): string | undefined {
  for (let i = d.state.agentPosts.length - 1; i >= 0; i--) {
    const post = d.state.agentPosts[i];
    if (post && post.seq < seq && !same(post.author, author)) return post.author;
  }
  return undefined;
}

function paused(d: Draft, a: string, b: string): boolean {
  if (!d.agent(a) || !d.agent(b)) return false;
  const messages = d.state.agentPosts.map((p) => ({ author: p.author, kind: 'agent' as const, at: p.at }));
  return pairPaused(messages, a, b, d.now, PAIR_GUARD);
}

/** Rule 7.2: the room is told once per pair. */
function tellPaused(d: Draft, a: string, b: string): void {
  const key = pairKey(a, b);
  if (d.state.told.includes(key)) return;
  d.set({ told: [...d.state.told, key] });
  d.line(
    `@human @${a} and @${b} have exchanged more than ${PAIR_GUARD.limit} messages in ` +
      `${PAIR_GUARD.windowMs / 60_000} minutes, so they no longer wake each other for now. ` +
      'Mention one of them to continue.',
  );
}

/** Rule 4: an agent's message, stored and counted. */
export function routeAgent(d: Draft, m: MessageFacts, text: string, replying: Replying): void {
  const { state, setup } = d;
  if (state.control.holder === 'humans') return;
  const { ask } = replying;
  const trace = ask?.trace;
  if (state.control.count >= setup.turnLimit) {
    // Humans who spoke after the turn that reached the limit began are still answered (6.1).
    handBack(d, 'turn limit', handBackText(setup.turnLimit), ask?.startedAt ?? m.seq);
    return;
  }
  const partner = previousAgent(d, m.author, m.seq);
  const pausedWithPartner = partner !== undefined && paused(d, m.author, partner);
  if (pausedWithPartner && partner) tellPaused(d, m.author, partner);
  const asked = m.requests.flatMap((name) => {
    const agent = d.agent(name);
    return agent && !paused(d, m.author, agent) ? [agent] : [];
  });
  if (asked.length > 0 && setup.kind === 'room') {
    openRequest(d, {
      requester: m.author,
      origin: setup.key,
      parent: ask?.requests[0] ?? null,
      text,
      seq: m.seq,
      awaited: asked.map((name) => ({ name, kind: 'agent' as const })),
      opener: {
        people: ask?.people ?? [],
        audience: ask?.audience ?? null,
        root: ask ? rootOf(ask) : undefined,
        trace,
      },
    });
    return;
  }
  if (ask && ask.requests.length > 0) {
    for (const id of ask.requests) answerRequest(d, id, { participant: m.author, text, outcome: 'answer' });
    return;
  }
  if (replying.noProgress || pausedWithPartner) return;
  if (ask?.startedAt !== undefined && d.state.lastHuman > ask.startedAt) return; // a human spoke meanwhile
  if (setup.kind === 'direct') return;
  if (setup.kind === 'pair') {
    const other = setup.pair?.find((name) => !same(name, m.author));
    const agent = other ? d.agent(other) : undefined;
    if (agent) {
      enqueue(d, { agent, reason: 'direct', about: m.seq, author: m.author, audience: null, fromAgent: true, trace });
      woken(d, m, [`${agent}:direct`], { trace });
    }
    return;
  }
  removeWhere(d, isObserver);
  const names: string[] = [];
  const skipped: Skipped[] = [];
  for (const agent of setup.agents) {
    const why = observerSkip(d, m, agent);
    if (why) {
      if (why !== 'self') skipped.push({ agent: agent.name, why });
      continue;
    }
    const reason: Reason = agent.activation === 'always' ? 'always' : 'mentioned';
    names.push(`${agent.name}:${reason}`);
    const about = { about: m.seq, author: m.author, audience: m.audience };
    enqueue(d, { agent: agent.name, reason, ...about, fromAgent: true, trace });
  }
  woken(d, m, names, { skipped, trace });
}

/** Why an agent is not woken as an observer of an agent's message (rule 4), or nothing when it is. */
function observerSkip(d: Draft, m: MessageFacts, agent: AgentProfile): Skipped['why'] | 'self' | undefined {
  if (same(agent.name, m.author)) return 'self';
  if (agent.activation !== 'always' && !m.mentions.some((name) => same(name, agent.name))) return 'activation';
  if (!canSee(agent.name, m)) return 'privacy';
  if (paused(d, m.author, agent.name)) return 'pair-guard';
  if (d.state.failed.some((name) => same(name, agent.name))) return 'failed';
  return busy(d, agent.name) ? 'busy' : undefined;
}
