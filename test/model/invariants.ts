/**
 * Properties of the machine checked on its own records during the generated runs, independently of the model:
 * asks, requests, posts, the turn limit, humans' questions and privacy.
 */
import type { Decision, RequestRow } from '../../src/room/effects.js';
import type { RoomEvent } from '../../src/room/events.js';
import { extractMentions } from '../../src/room/text/mentions.js';
import { classifyReply } from '../../src/room/text/replies.js';
import { classifyLine } from './lines.js';
import type { MachineSystem } from './machine.js';
import { accessOf, type Observed, type Oracle, type Reply, type Step, type World } from './script.js';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

interface Stored {
  readonly seq: number;
  readonly kind: string;
  readonly author: string;
  readonly text: string;
  readonly audience: readonly string[] | null;
}

interface Question {
  readonly step: number;
  readonly room: string;
  readonly human: string;
  readonly agent: string;
}

export class Invariants {
  private step = 0;
  private deliverer: { agent: string; reply: Reply | null } | null = null;
  /** A reply that waited for the platform and goes through in this step. */
  private released: { agent: string; text: string } | null = null;
  /** Agents whose turn an operator stopped and that end in this step (delivered, or dropped by a restart). */
  private stopped: string[] = [];
  private readonly used = new Map<string, number>();
  private readonly stored = new Map<string, Stored[]>();
  private readonly rows = new Map<number, RequestRow>();
  private readonly asked = new Set<string>();
  private readonly count = new Map<string, { n: number; due: boolean }>();
  private readonly questions: Question[] = [];
  private readonly history: Observed[][] = [];
  private readonly problems: string[] = [];
  private readonly spoke: Array<{ step: number; room: string; human: string }> = [];
  /** Humans' messages to agents the access policy does not let them wake (rule 16): each must be told. */
  private readonly refusals: Question[] = [];
  /** Humans' messages that answered an agent's request (2.1: that agent resumes instead of being asked). */
  private readonly answeredRequests: Array<{ step: number; human: string; requester: string }> = [];

  /** Rule 17: the machine (its states before each decision), the approved cards, the answered tokens and cards. */
  private machine: MachineSystem | undefined;
  private readonly approved = new Set<string>();
  private readonly ran = new Set<string>();
  private readonly tokens = new Set<string>();
  private readonly answeredCards = new Set<string>();

  constructor(
    private readonly world: World,
    private readonly oracle: Oracle,
  ) {}

  private fail(what: string): void {
    this.problems.push(`step ${this.step}: ${what}`);
  }

  /** Before a step: who delivers (and what), and which questions a human asks. */
  before(step: Step, machine: MachineSystem): void {
    this.step += 1;
    this.machine = machine;
    this.deliverer = null;
    this.released = null;
    this.stopped = [];
    if (step.kind === 'reply-through') {
      const waiting = machine.state(step.room).posts.find((post) => post.purpose === 'reply');
      if (waiting?.agent) this.released = { agent: waiting.agent, text: waiting.text };
    }
    if (step.kind === 'restart') {
      for (const room of machine.roomKeys()) {
        const current = machine.state(room).current;
        if (current?.stop === 'operator' && current.post === undefined) this.stopped.push(current.ask.agent);
      }
    }
    if (step.kind === 'deliver') {
      const current = machine.state(step.room).current;
      if (current && current.post === undefined) {
        const agent = current.ask.agent;
        const stopped = current.stop === 'operator' || current.stop === 'deadline';
        let reply: Reply | null = null;
        if (!stopped) {
          const n = this.used.get(agent) ?? 0;
          this.used.set(agent, n + 1);
          reply = this.oracle[agent]?.[n] ?? { kind: 'text', text: '[pass]' };
        }
        this.deliverer = { agent, reply };
        if (current.stop === 'operator') this.stopped.push(agent);
      }
    }
    if (step.kind === 'say') {
      this.spoke.push({ step: this.step, room: step.room, human: step.human });
      const dm = /^chat:dm-([^-]+)-/.exec(step.room)?.[1];
      const names = this.world.agents.map((a) => a.name);
      const agents = dm
        ? names.filter((n) => same(n, dm))
        : [...extractMentions(step.text, names), ...names.filter((n) => step.addressed?.some((a) => same(a, n)))];
      const access = accessOf(this.world, step.room, step.human);
      for (const agent of new Set(agents)) {
        const question = { step: this.step, room: step.room, human: step.human, agent };
        if (access.mayWake === undefined || access.mayWake.some((n) => same(n, agent))) this.questions.push(question);
        else this.refusals.push(question);
      }
    }
  }

  /** Every decision the machine makes, as it makes it. */
  readonly tap = (room: string, event: RoomEvent, decision: Decision): void => {
    // Rule 16.3: an outsider's message is history only (it restarts no count).
    const outsider = event.type === 'message' && event.message.kind === 'human' && event.message.mayWake?.length === 0;
    for (const write of decision.writes) {
      if (write.type === 'message') {
        const m = write.message;
        const list = this.stored.get(room) ?? [];
        list.push({ seq: m.seq, kind: m.kind, author: m.author, text: m.text, audience: m.audience });
        this.stored.set(room, list);
        this.countMessage(room, outsider && m.kind === 'human' ? 'outsider' : m.kind, m.text);
      }
      if (write.type === 'request') this.request(write.request);
    }
    this.approvals(room, event, decision);
    if (event.type === 'command' && event.command.isOperator && !event.command.args.trim()) {
      if (event.command.name === 'pass' || event.command.name === 'reset') this.count.set(room, { n: 0, due: false });
    }
    for (const effect of decision.effects) {
      if (effect.type !== 'ask') continue;
      for (const { ask, again } of effect.turns) {
        if (ask.reason === 'resume') continue;
        const about = this.stored.get(room)?.find((m) => m.seq === ask.about);
        if (about?.audience && !about.audience.some((n) => same(n, ask.agent))) {
          this.fail(`${ask.agent} was asked (${ask.reason}) about #${ask.about} in ${room}, a message it may not see`);
        }
        const key = `${room} ${ask.agent} ${ask.reason} ${ask.about}`;
        if (!again && this.asked.has(key))
          this.fail(`${ask.agent} was asked twice as ${ask.reason} about #${ask.about} in ${room}`);
        this.asked.add(key);
      }
    }
  };

  /**
   * Rule 17, on the machine's own decisions: a call runs only when its card was approved by its root (by id: the
   * person's own, never a namesake's) or an operator, and then once; a card and a held call are answered once;
   * /pass and /reset leave no card; a restart keeps the cards of the turns taken again (their deadlines set again);
   * the same call of a turn that has a card waiting makes no second card.
   */
  private approvals(room: string, event: RoomEvent, decision: Decision): void {
    const before = this.machine?.state(room).approvals ?? [];
    for (const effect of decision.effects) {
      if (effect.type === 'record' && effect.record.kind === 'approval' && effect.record.status !== 'asked') {
        const key = `${room} ${effect.record.id}`;
        if (this.answeredCards.has(key)) this.fail(`card ${effect.record.id} in ${room} answered twice`);
        this.answeredCards.add(key);
      }
      if (effect.type !== 'approval-result') continue;
      if (this.tokens.has(effect.token)) this.fail(`the held call ${effect.token} got a second answer`);
      this.tokens.add(effect.token);
      if (!effect.approved) continue;
      if (event.type === 'command' && event.command.name === 'approve') {
        const id = event.command.args
          .trim()
          .replace(/^\[|\]$/g, '')
          .toUpperCase();
        const card = before.find((a) => a.id === id && a.status === 'waiting');
        const c = event.command;
        const root = card?.root;
        // The root is a human who spoke in the conversation, approving with their own id.
        const byRoot =
          root !== undefined &&
          !card?.operatorsOnly &&
          c.userId === root.id &&
          c.userId === `u-${c.user}` &&
          this.spoke.some((s) => same(s.human, root.name));
        if (!card || !(c.isOperator || byRoot)) {
          this.fail(`${c.user} (${c.userId}) approved ${id} in ${room}, which was not theirs to approve`);
          continue;
        }
        this.approved.add(`${room} ${card.id}`);
        continue;
      }
      if (event.type === 'approval') {
        // The turn taken again makes the approved call: it runs, once, on its card's approval.
        const r = event.request;
        const card = before.find(
          (a) =>
            a.status === 'approved' &&
            a.ask === r.ask &&
            a.agent === r.agent &&
            a.tool === r.tool &&
            a.input === r.input,
        );
        const key = `${room} ${card?.id}`;
        if (!card || !this.approved.has(key) || this.ran.has(key))
          this.fail(`${r.agent}'s ${r.tool} call in ${room} ran without an approval of its own`);
        this.ran.add(key);
        continue;
      }
      this.fail(`a held call in ${room} ran on ${event.type}, which approves nothing`);
    }
    const after = decision.state.approvals ?? [];
    if (event.type === 'command' && event.command.isOperator && !event.command.args.trim()) {
      if ((event.command.name === 'pass' || event.command.name === 'reset') && after.length > 0)
        this.fail(`/${event.command.name} in ${room} left ${after.map((a) => a.id).join(', ')}`);
    }
    if (event.type === 'restart') {
      for (const card of before) {
        if (card.status !== 'waiting' || !decision.state.queue.some((q) => q.id === card.ask)) continue;
        const kept = after.some((a) => a.id === card.id && a.status === 'waiting');
        const timer = decision.effects.some(
          (e) => e.type === 'approval-timer' && e.id === card.id && e.at === card.expiresAt,
        );
        if (!kept || !timer) this.fail(`a restart in ${room} lost card ${card.id} or its deadline`);
      }
    }
    if (event.type === 'approval') {
      const r = event.request;
      const waiting = before.some(
        (a) =>
          a.status === 'waiting' && a.ask === r.ask && a.agent === r.agent && a.tool === r.tool && a.input === r.input,
      );
      const card = decision.effects.some(
        (e) => e.type === 'post' && e.post.agent === null && classifyLine(e.post.text).kind === 'card',
      );
      if (waiting && card) this.fail(`the same ${r.tool} call in ${room} made a second card`);
    }
  }

  /** At most TURN_LIMIT agent messages in a row, then exactly one hand-back line. */
  private countMessage(room: string, kind: string, text: string): void {
    const state = this.count.get(room) ?? { n: 0, due: false };
    if (kind === 'outsider') return;
    if (kind === 'human') {
      this.count.set(room, { n: 0, due: false });
      return;
    }
    if (kind === 'system') {
      const line = classifyLine(text);
      if (line.kind === 'hand-back') {
        if (line.reason === 'turn limit' && !state.due)
          this.fail(`a turn-limit line in ${room} after ${state.n} agent messages`);
        this.count.set(room, { n: 0, due: false });
      }
      return;
    }
    if (state.due)
      this.fail(`an agent message in ${room} after ${this.world.turnLimit} in a row, before the hand-back line`);
    const n = state.n + 1;
    if (n > this.world.turnLimit) this.fail(`${n} agent messages in a row in ${room}`);
    this.count.set(room, { n, due: n >= this.world.turnLimit });
  }

  /** Every request settles exactly once, with each participant's real outcome. */
  private request(row: RequestRow): void {
    const before = this.rows.get(row.id);
    if (before && before.status !== 'open')
      this.fail(`request #${row.id} settled (${before.status}) and then ${row.status}`);
    const old = before?.answers ?? [];
    if (old.some((a, i) => row.answers[i]?.participant !== a.participant || row.answers[i]?.text !== a.text)) {
      this.fail(`request #${row.id} changed an answer it had`);
    }
    for (const answer of row.answers.slice(old.length)) {
      this.checkAnswer(row, answer);
      const human = row.awaited.find((p) => p.kind === 'human' && same(p.name, answer.participant));
      if (human) this.answeredRequests.push({ step: this.step, human: human.name, requester: row.requester });
    }
    if (row.status === 'answered') {
      const missing = row.awaited.filter((p) => !row.answers.some((a) => same(a.participant, p.name)));
      if (missing.length > 0) this.fail(`request #${row.id} answered without ${missing.map((p) => p.name).join(', ')}`);
    }
    this.rows.set(row.id, row);
  }

  private checkAnswer(row: RequestRow, answer: RequestRow['answers'][number]): void {
    const who = answer.participant;
    const d = this.deliverer;
    const ok = (() => {
      switch (answer.outcome) {
        case 'answer':
          return (this.stored.get(row.target) ?? []).some(
            (m) => same(m.author, who) && m.text === answer.text && m.kind !== 'system',
          );
        case 'pass':
          return d?.reply?.kind === 'text' && same(d.agent, who) && classifyReply(d.reply.text).kind === 'pass';
        case 'stopped':
          return this.stopped.some((agent) => same(agent, who));
        case 'failed':
          return (
            (d?.reply?.kind === 'fail' && same(d.agent, who) && d.reply.reason === answer.text) ||
            answer.text === 'its model failed earlier in this round' ||
            answer.text === 'its turn was cut by restarts'
          );
        default:
          return false;
      }
    })();
    if (!ok)
      this.fail(`request #${row.id} recorded ${who}: ${answer.outcome} "${answer.text}", which is not what happened`);
  }

  /** After a step: posts come only from the turn that answered (or the reply that waited), each at most once. */
  after(observed: readonly Observed[]): void {
    this.history.push([...observed]);
    const allowed: Array<{ agent: string; text: string }> = [];
    const d = this.deliverer;
    if (d?.reply?.kind === 'text') {
      const outcome = classifyReply(d.reply.text);
      if (outcome.kind !== 'pass' && outcome.text) allowed.push({ agent: d.agent, text: outcome.text });
      if (this.world.agents.find((a) => a.name === d.agent)?.actions)
        allowed.push(...(d.reply.actions ?? []).map((a) => ({ agent: d.agent, text: a.text })));
    }
    if (this.released) allowed.push(this.released);
    for (const o of observed) {
      if (o.kind !== 'post') continue;
      const at = allowed.findIndex((a) => same(a.agent, o.agent) && a.text === o.text);
      if (at < 0) this.fail(`${o.agent} posted ${JSON.stringify(o.text)}, which no turn of this step wrote (or twice)`);
      else allowed.splice(at, 1);
    }
    for (const [room, state] of this.count)
      if (state.due) this.fail(`${this.world.turnLimit} agent messages in a row in ${room} and no hand-back line`);
  }

  /** At the end (after the drain): every request settled; every human question got its turn or a visible line. */
  end(drained: boolean): string | undefined {
    if (drained) {
      for (const row of this.rows.values()) if (row.status === 'open') this.fail(`request #${row.id} never settled`);
      for (const q of this.questions)
        if (!this.answered(q))
          this.fail(`${q.human}'s question to ${q.agent} (step ${q.step}, ${q.room}) got no turn and no line`);
      for (const q of this.refusals)
        if (!this.told(q))
          this.fail(`${q.human}'s words to ${q.agent} (step ${q.step}, ${q.room}) were refused and nobody told them`);
    }
    return this.problems.length > 0 ? this.problems.join('\n') : undefined;
  }

  /**
   * A refusal is visible (16.4): the person was told in that room by then (once per room), or their message answered
   * the agent's own request (then it is an answer, not a request).
   */
  private told(q: Question): boolean {
    const answeredRequest = this.answeredRequests.some(
      (a) => a.step === q.step && same(a.human, q.human) && same(a.requester, q.agent),
    );
    const told = this.history
      .slice(0, q.step)
      .flat()
      .some((o) => o.kind === 'tell' && o.room === q.room && same(o.human, q.human));
    return answeredRequest || told;
  }

  /**
   * A human's question to an agent is settled by the rules when the agent was asked with that human among its askers
   * (2.2), or the message answered the agent's request (2.1, 5.3: the request has the answer, and the agent resumes
   * unless its own room handed back), or the human spoke again there (2.3: the newer message replaces it), or the
   * room was told: a dropped-questions line naming both (10.2), a hand-back (6.1), the agent's failure this round
   * (3.4) or its turn given up after restarts (12.2).
   */
  private answered(q: Question): boolean {
    const later = this.history.slice(q.step - 1).flat();
    const spokeAgain = this.spoke.some((s) => s.step > q.step && s.room === q.room && same(s.human, q.human));
    const answeredRequest = this.answeredRequests.some(
      (a) => a.step === q.step && same(a.human, q.human) && same(a.requester, q.agent),
    );
    return (
      spokeAgain ||
      answeredRequest ||
      later.some((o) => {
        if (o.kind === 'ask')
          return same(o.agent, q.agent) && o.room === q.room && o.humans.some((h) => same(h, q.human));
        if (o.kind !== 'line' || o.room !== q.room) return false;
        const line = o.line;
        if (line.kind === 'dropped')
          return line.drops.some((d) => same(d.agent, q.agent) && d.humans.some((h) => same(h, q.human)));
        if (line.kind === 'failure' || line.kind === 'cut') return same(line.agent, q.agent);
        return line.kind === 'hand-back';
      })
    );
  }
}
