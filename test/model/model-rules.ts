/**
 * The model's rules: who is asked (rules 2 and 4), the queue (2.3, 4.5), hand-backs (6) and the bridge's lines
 * (10). Plain mutable data; every fact that history holds is read from the room's transcript (model-room.ts).
 */

import { Ledger } from './model-requests.js';
import {
  type Ask,
  agentsSince,
  awaits,
  canSee,
  controlOf,
  countOf,
  failedThisRound,
  has,
  holding,
  humanSince,
  isObserver,
  joinAudience,
  type Message,
  messages,
  newAsk,
  pairName,
  pairPaused,
  parkWaiting,
  type Reason,
  type Room,
  rootOf,
  same,
  seqOf,
  told,
  unique,
  waitsForCard,
} from './model-room.js';
import type { LineInfo } from './script.js';

/** What the access policy says of a human's message (rule 16.1); empty: every agent. */
export interface Access {
  readonly mayWake?: readonly string[];
  readonly refused?: 'user' | 'channel';
}

export type Drops = Array<{ agent: string; humans: string[] }>;

/** At most this many humans' questions wait for one agent (2.3). */
const MAX_WAITING = 5;

export class Rules extends Ledger {
  // Rule 2: a human's message, with what the access policy says of its author (rule 16).
  human(room: Room, m: Message, text: string, access: Access = {}): void {
    const others = (a: Ask) => a.questions.some((q) => !same(q.human, m.author));
    if ((room.turn && others(room.turn.ask)) || room.queue.some(others)) this.coverage.add('two humans interleaved');
    // 16.3: an outsider's message answers nothing and takes nothing from the queue.
    const outsider = m.outsider === true;
    if (outsider) this.noteOutsider(room, m);
    else if (access.mayWake) this.coverage.add('a human who may wake only some agents');
    const completed = outsider ? [] : this.humanAnswers(room, m.author, text);
    // 2.3: the human's own questions, every observer and every ask an agent's message made leave the queue.
    if (!outsider)
      room.queue = room.queue.flatMap((ask) => {
        if (isObserver(ask) || ask.fromAgent) return [];
        if (!ask.questions.some((q) => same(q.human, m.author))) return [ask];
        const questions = ask.questions.filter((q) => !same(q.human, m.author));
        return questions.length > 0 || ask.requests.length > 0 ? [{ ...ask, questions }] : [];
      });
    const named: string[] = [];
    const refused: string[] = [];
    let drops: Drops = [];
    const eligible = (agent: string) => !has(named, agent) && !has(completed, agent) && canSee(agent, m);
    // 16.2: an agent the author may not wake is not asked, in any role; it is named in the refusal.
    const mayWake = (agent: string) => {
      if (access.mayWake === undefined || has(access.mayWake, agent)) return true;
      if (!has(refused, agent)) refused.push(agent);
      return false;
    };
    const question = (agent: string, reason: Reason) => {
      if (!eligible(agent) || !mayWake(agent)) return;
      named.push(agent);
      const base = { agent, reason, about: m.seq, author: m.author, audience: m.audience };
      drops = joinDrops(drops, this.askHuman(room, { ...base, questions: [{ human: m.author, seq: m.seq }] }));
    };
    if (room.dm) {
      question(room.dm, 'direct');
    } else {
      const before = { ...room, log: room.log.slice(0, -1) };
      for (const a of this.world.agents) if (awaits(before, a.name, m.author)) question(a.name, 'awaiting');
      for (const agent of m.mentions) question(agent, 'addressed');
      for (const a of this.world.agents) {
        if (a.activation !== 'always' || !eligible(a.name) || !mayWake(a.name)) continue;
        named.push(a.name);
        room.queue.push(
          newAsk({
            agent: a.name,
            reason: 'always',
            about: m.seq,
            author: m.author,
            audience: m.audience,
          }),
        );
      }
    }
    if (refused.length > 0) this.tellRefused(room, m.author, access.refused ?? 'user', refused);
    this.dropped(room, drops);
  }

  /** 16.4: the refused person is told once per room which agents their words do not wake, and why. */
  tellRefused(room: Room, human: string, why: 'user' | 'channel', agents: readonly string[]): void {
    if (room.log.some((e) => e.type === 'refusal-told' && same(e.human, human))) return;
    room.log.push({ type: 'refusal-told', human });
    this.out.push({ kind: 'tell', room: room.key, human, why, agents: [...agents] });
  }

  /** What an outsider's message met (coverage only). */
  private noteOutsider(room: Room, m: Message): void {
    this.coverage.add("an outsider's message");
    const before = { ...room, log: room.log.slice(0, -1) };
    if (room.turn || room.queue.length > 0) this.coverage.add("an outsider's message while the agents worked");
    if (controlOf(before).holder === 'humans') this.coverage.add("an outsider's message after a hand-back");
    const awaited = this.world.agents.some((a) => awaits(before, a.name, m.author));
    const asked = this.open(room.key).some((q) => q.awaited.some((p) => p.kind === 'human' && same(p.name, m.author)));
    if (awaited || asked) this.coverage.add('an outsider an agent waits for');
  }

  /** 2.3: a human's question, merged into the agent's queued ask that answers humans; at most 5 wait. */
  askHuman(
    room: Room,
    input: Partial<Ask> & Pick<Ask, 'agent' | 'reason' | 'about' | 'author' | 'audience' | 'questions'>,
  ): Drops {
    // 17.5: never into a turn parked behind its card (the question would wait for the card).
    const queued = room.queue.find(
      (a) => same(a.agent, input.agent) && a.questions.length > 0 && !waitsForCard(room, a.id),
    );
    if (!queued) {
      room.queue.push(newAsk(input));
      return [];
    }
    const questions = [
      ...queued.questions.filter((q) => !input.questions.some((n) => same(n.human, q.human))),
      ...input.questions,
    ];
    const cut = questions.splice(0, Math.max(0, questions.length - MAX_WAITING));
    queued.reason = queued.reason === 'addressed' || input.reason === 'addressed' ? 'addressed' : input.reason;
    queued.about = Math.max(queued.about, input.about);
    queued.author = input.author;
    queued.questions = questions;
    queued.audience = joinAudience(queued.audience, input.audience);
    return cut.length > 0 ? [{ agent: queued.agent, humans: cut.map((q) => q.human) }] : [];
  }

  // Rule 4: an agent's message, already counted.
  route(
    room: Room,
    m: Message,
    turn: { ask: Ask; startedAt: number; people: readonly string[] } | null,
    noProgress: boolean,
  ): void {
    const control = controlOf(room);
    if (control.holder === 'humans') return;
    if (countOf(room) >= this.world.turnLimit) {
      this.handBack(
        room,
        'turn limit',
        { kind: 'hand-back', reason: 'turn limit' },
        room.turn?.startedAt ?? turn?.startedAt ?? m.seq,
      );
      return;
    }
    const previous = messages(room)
      .filter((x) => x.kind === 'agent' && x.seq < m.seq && !same(x.author, m.author))
      .at(-1);
    const paused = (other: string) => pairPaused(room, m.author, other, this.now);
    const partnerPaused = previous !== undefined && paused(previous.author);
    if (previous && partnerPaused && !told(room, pairName(m.author, previous.author))) {
      room.log.push({ type: 'told', pair: pairName(m.author, previous.author) });
      this.line(room, { kind: 'pair', a: m.author, b: previous.author });
    }
    const asked = m.asks.flatMap((name) => {
      const agent = this.agent(name);
      return agent && !paused(agent) ? [agent] : [];
    });
    if (asked.length > 0 && !room.dm) {
      this.openRequest(room, {
        requester: m.author,
        origin: room.key,
        parent: turn?.ask.requests[0] ?? null,
        text: m.text,
        seq: m.seq,
        awaited: asked.map((name) => ({ name, kind: 'agent' })),
        opener: {
          people: turn?.people ?? [],
          audience: turn?.ask.audience ?? null,
          root: turn ? rootOf(turn.ask) : null,
        },
      });
      return;
    }
    if (turn && turn.ask.requests.length > 0) {
      for (const id of turn.ask.requests) this.answer(id, m.author, 'answer', m.text);
      return;
    }
    if (noProgress || partnerPaused) return;
    if (turn && humanSince(room, turn.startedAt)) return;
    if (room.dm) return;
    room.queue = room.queue.filter((a) => !isObserver(a));
    for (const a of this.world.agents) {
      const mentioned = has(m.mentions, a.name);
      if (a.activation !== 'always' && !mentioned) continue;
      if (same(a.name, m.author) || !canSee(a.name, m) || paused(a.name) || failedThisRound(room, a.name)) continue;
      if (this.busy(room, a.name)) continue;
      const reason = a.activation === 'always' ? 'always' : 'mentioned';
      room.queue.push(
        newAsk({ agent: a.name, reason, about: m.seq, author: m.author, audience: m.audience, fromAgent: true }),
      );
    }
  }

  busy(room: Room, agent: string): boolean {
    const mine = (turn: { ask: Ask } | null | undefined) => turn != null && same(turn.ask.agent, agent);
    return mine(room.turn) || mine(room.stalled?.turn) || room.queue.some((a) => same(a.agent, agent));
  }

  // Rule 6.1.
  handBack(room: Room, reason: string, line: LineInfo | null, since: number): void {
    this.out.push({ kind: 'hand-back', room: room.key, reason });
    if (reason === 'turn limit') this.coverage.add('the turn limit reached');
    room.log.push({ type: 'control', holder: 'humans', reason });
    // The turn whose reply waits for the platform is still the room's (its reply is posted when it goes through).
    const from = room.turn?.startedAt ?? room.stalled?.turn.startedAt ?? since;
    if (room.turn) room.turn.stop = 'control';
    room.queue = room.queue.filter(
      (a) => a.questions.length > 0 && a.about > from && ['addressed', 'awaiting', 'direct'].includes(a.reason),
    );
    this.closeRequests(room);
    if (line) this.line(room, line);
  }

  /** 10.2: one line naming whose questions were dropped (gathered during a catch-up). */
  dropped(room: Room, drops: Drops): void {
    if (drops.length === 0) return;
    if (holding(room)) room.heldDrops = joinDrops(room.heldDrops, drops);
    else this.line(room, { kind: 'dropped', drops });
  }

  /**
   * The queue's pace: one turn at a time, in queue order, not while a reply waits for the platform, nor while the
   * room holds for a catch-up.
   */
  override advance(room: Room): void {
    parkWaiting(this.coverage, room);
    while (!room.turn && !room.stalled && !holding(room)) {
      const at = room.queue.findIndex((a) => !waitsForCard(room, a.id));
      if (at < 0) return;
      const [ask] = room.queue.splice(at, 1) as [Ask];
      if (failedThisRound(room, ask.agent)) {
        for (const id of ask.requests) this.answer(id, ask.agent, 'failed', 'its model failed earlier in this round');
        continue;
      }
      if (controlOf(room).holder === 'humans') {
        if (ask.questions.length === 0) continue;
        room.log.push({ type: 'control', holder: 'agents' }); // 6.4
      }
      this.start(room, ask, (ask.attempts ?? 0) + 1);
    }
  }

  start(room: Room, ask: Ask, attempts: number): void {
    room.turn = { ask, startedAt: seqOf(room), people: this.peopleOf(room, ask), attempts };
    this.observeAsk(room, ask);
  }

  observeAsk(room: Room, ask: Ask): void {
    this.out.push({
      kind: 'ask',
      room: room.key,
      agent: ask.agent,
      reason: ask.reason,
      about: ask.about,
      requests: [...ask.requests],
      humans: ask.questions.map((q) => q.human),
      ...(ask.resume !== undefined ? { resumes: ask.resume } : {}),
      frame: this.frameOf(room, ask),
    });
  }

  /** Why the turn is asked, as its prompt frames it. */
  frameOf(room: Room, ask: Ask): string {
    const user = ask.questions[0]?.human ?? ask.author;
    if (ask.reason === 'direct') return `direct with ${user}`;
    if (ask.reason === 'always' || ask.reason === 'mentioned') return 'observe';
    if (ask.reason === 'resume') return 'resume';
    // 2.2.2: it asked this human and the human answered.
    if (ask.reason === 'awaiting' && ask.requests.length === 0 && ask.questions.length === 1)
      return `answered by ${user}`;
    if (room.dm !== undefined) return `direct with ${user}`;
    const requesters = ask.requests.flatMap((id) =>
      this.requests.filter((r) => r.id === id && r.status === 'open').map((r) => r.requester),
    );
    return `requested by ${unique([...ask.questions.map((q) => q.human), ...requesters]).join(',')}`;
  }

  /** 2.4: whom a turn's reply answers (naming them is the answer). */
  peopleOf(room: Room, ask: Ask): string[] {
    const requesters = ask.requests.flatMap((id) => this.requests.filter((r) => r.id === id).map((r) => r.requester));
    switch (ask.reason) {
      case 'always':
      case 'mentioned':
        return unique([ask.author, ...agentsSince(room, ask.about)]);
      case 'request':
        return unique(requesters);
      case 'resume': {
        const request = this.requests.find((r) => r.id === ask.resume);
        return unique([...(request?.opener.people ?? []), ...requesters]);
      }
      default:
        return unique([...ask.questions.map((q) => q.human), ...requesters, ...agentsSince(room, ask.about)]);
    }
  }
}

export function joinDrops(a: Drops, b: Drops): Drops {
  const out = a.map((d) => ({ agent: d.agent, humans: [...d.humans] }));
  for (const drop of b) {
    const entry = out.find((e) => same(e.agent, drop.agent));
    if (!entry) out.push({ agent: drop.agent, humans: [...drop.humans] });
    else entry.humans = unique([...entry.humans, ...drop.humans]);
  }
  return out;
}
