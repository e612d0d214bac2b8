/**
 * The executable model: a second, deliberately simple implementation of the rules of the room, driven through the
 * script language (script.ts) beside the machine (machine.ts). It keeps whole transcripts and reads what it needs
 * from them; it shares only the leaf text readers with src/room (which it must not otherwise import).
 */

import { extractMentions } from '../../src/room/text/mentions.js';
import { classifyReply } from '../../src/room/text/replies.js';
import { answerCard, askApproval, denyCards, endCards, expireCard } from './model-approvals.js';
import type { Participant } from './model-requests.js';
import {
  type Ask,
  controlOf,
  has,
  holding,
  humanMentions,
  isObserver,
  nextReply,
  type Room,
  readAgentReply,
  rootOf,
  same,
  type Turn,
} from './model-room.js';
import { joinDrops, Rules } from './model-rules.js';
import {
  accessOf,
  dmRoom,
  MAIN,
  type Observed,
  type Oracle,
  type Reply,
  SIDE,
  type Step,
  type System,
  type World,
} from './script.js';

/** A turn cut by this many restarts is not taken again (12.2): it is taken at most this many times. */
const MAX_CUTS = 3;

export class ModelSystem implements System {
  readonly rules: Rules;
  private readonly used = new Map<string, number>();

  constructor(
    readonly world: World,
    private readonly oracle: Oracle,
  ) {
    this.rules = new Rules(world);
  }

  step(step: Step): Observed[] {
    const r = this.rules;
    r.out = [];
    r.now += 1000;
    switch (step.kind) {
      case 'say':
        r.inRoom(step.room, () =>
          this.say(r.room(step.room), step.human, step.text, step.addressed ?? [], step.missed === true),
        );
        break;
      case 'caught-up':
        r.inRoom(step.room, () => this.caughtUp(r.room(step.room)));
        break;
      case 'edit':
        r.inRoom(step.room, () => this.edit(r.room(step.room), step.back, step.text, step.late === true));
        break;
      case 'deliver':
        this.deliver(r.room(step.room));
        break;
      case 'command': {
        const room = r.room(step.room);
        if (step.name === 'approve' || step.name === 'deny') {
          const by = { name: step.user ?? 'op', ownId: step.namesake !== true, operator: step.operator };
          r.inRoom(step.room, () => answerCard(r, room, step.name as 'approve' | 'deny', step.args, by));
        } else r.inRoom(step.room, () => this.command(room, step.name, step.args, step.operator));
        break;
      }
      case 'approval-asked':
        r.inRoom(step.room, () => askApproval(r, r.room(step.room), step.tool, step.input, step.tooLong === true));
        break;
      case 'approval-expires':
        expireCard(r);
        break;
      case 'deadline':
        this.deadline();
        break;
      case 'restart':
        // As the bridge starts: each room goes on from where it was, then (nothing was missed) its catch-up is done.
        for (const room of [...r.rooms.values()]) r.inRoom(room.key, () => this.restart(room));
        for (const room of [...r.rooms.values()]) r.inRoom(room.key, () => this.caughtUp(room));
        break;
      case 'post-fails':
        r.failNext.add(step.room);
        break;
      case 'reply-stalls':
        r.stallNext.add(step.room);
        break;
      case 'reply-through':
        r.inRoom(step.room, () => this.through(r.room(step.room)));
        break;
    }
    for (const room of r.rooms.values()) endCards(room);
    return r.out;
  }

  private say(room: Room, human: string, text: string, addressed: readonly string[], missed: boolean): void {
    const r = this.rules;
    if (missed) room.log.push({ type: 'missed' });
    const mentions = humanMentions(this.world, text, addressed);
    const audience = r.audience(room, human, mentions, null);
    // Rule 16: stored either way; an outsider's message is history only.
    const access = accessOf(this.world, room.key, human);
    const outsider = access.mayWake?.length === 0;
    const m = r.record(room, {
      author: human,
      kind: 'human',
      text,
      mentions,
      asks: [],
      audience,
      edit: false,
      ...(outsider ? { outsider } : {}),
    });
    room.said.push({ author: human, at: m.at, addressed: [...mentions] });
    r.human(room, m, text, access);
  }

  /** Rule 11: the catch-up is done; the asks it held run, and the questions it dropped are told in one line. */
  private caughtUp(room: Room): void {
    if (holding(room) && (room.queue.length > 0 || room.heldDrops.length > 0)) this.rules.coverage.add('a catch-up');
    room.log.push({ type: 'caught-up' });
    const drops = room.heldDrops;
    room.heldDrops = [];
    this.rules.dropped(room, drops);
  }

  /** Rule 13: an edit soon after its message that newly mentions agents asks them, as a message of its own. */
  private edit(room: Room, back: number, text: string, late: boolean): void {
    const r = this.rules;
    const original = room.said[room.said.length - back];
    if (!original || room.dm !== undefined) return; // a DM's message already asked its agent, and only it (2.2.1)
    const at = late ? original.at + this.world.editWindowMs + 1 : r.now;
    if (this.world.editWindowMs <= 0 || at - original.at > this.world.editWindowMs) return;
    const names = this.world.agents.map((a) => a.name);
    const addressed = extractMentions(text, names).filter((a) => !has(original.addressed, a));
    // 16.2: an edit asks only the agents its author may wake; the others are refused (told once, 16.4).
    const access = accessOf(this.world, room.key, original.author);
    const wake = addressed.filter((a) => access.mayWake === undefined || has(access.mayWake, a));
    const refused = addressed.filter((a) => !has(wake, a));
    if (refused.length > 0) {
      r.coverage.add('an edit refused by the access policy');
      r.tellRefused(room, original.author, access.refused ?? 'user', refused);
    }
    if (wake.length === 0) return;
    original.addressed.push(...wake);
    r.coverage.add('an edit that woke someone');
    const audience = r.audience(room, original.author, wake, null);
    const edit = {
      author: original.author,
      kind: 'human' as const,
      text: `(edited) ${text}`,
      mentions: wake,
      asks: [],
      audience,
    };
    const m = r.record(room, { ...edit, edit: true });
    let drops: ReturnType<typeof joinDrops> = [];
    for (const agent of wake) {
      const question = { agent, reason: 'addressed' as const, about: m.seq, author: m.author, audience };
      drops = joinDrops(drops, r.askHuman(room, { ...question, questions: [{ human: m.author, seq: m.seq }] }));
    }
    r.dropped(room, drops);
  }

  /** The turn being written answers: a stopped turn ends; otherwise its actions, then its text. */
  private deliver(room: Room): void {
    const r = this.rules;
    const turn = room.turn;
    if (!turn) return;
    if (turn.stop === 'operator' || turn.stop === 'deadline') {
      r.inRoom(room.key, () => this.finish(room, turn, null));
      return;
    }
    const reply = nextReply(this.oracle, this.used, turn.ask.agent);
    const canAct = this.world.agents.find((a) => a.name === turn.ask.agent)?.actions === true;
    if (reply.kind === 'text' && canAct) {
      for (const action of reply.actions ?? []) {
        if (action.kind === 'channel') {
          const target = action.room === 'here' ? room.key : room.key === MAIN ? SIDE : MAIN;
          // send_channel_message posts in rooms only: a DM refuses it.
          if (target.startsWith('chat:dm-')) {
            r.out.push({ kind: 'action', result: 'private-room' });
            continue;
          }
          const awaited = action.requestReply.map((name): Participant => {
            const agent = r.agent(name);
            return agent ? { name: agent, kind: 'agent' } : { name, kind: 'human' };
          });
          r.inRoom(target, () => this.act(r.room(target), turn, room.key, action.text, awaited));
        } else {
          if (r.agent(action.to)) continue;
          const target = dmRoom(turn.ask.agent, action.to);
          const awaited: Participant[] = action.requestReply ? [{ name: action.to, kind: 'human' }] : [];
          r.inRoom(target, () => this.act(r.room(target), turn, room.key, action.text, awaited));
        }
      }
    }
    r.inRoom(room.key, () => this.finish(room, turn, reply));
  }

  /** An agent's messaging action lands in `room`: posted (and routed), refused while the humans have control. */
  private act(room: Room, turn: Turn, from: string, text: string, requestReply: readonly Participant[]): void {
    const r = this.rules;
    const agent = turn.ask.agent;
    if (controlOf(room).holder === 'humans') {
      r.out.push({ kind: 'action', result: 'refused' });
      return;
    }
    const awaited = requestReply.filter(
      (p, i) => !same(p.name, agent) && requestReply.findIndex((q) => same(q.name, p.name)) === i,
    );
    r.out.push({ kind: 'post', room: room.key, agent, text });
    if (r.failNext.delete(room.key)) {
      r.out.push({ kind: 'action', result: 'failed' });
      return;
    }
    const reading = readAgentReply(this.world, room, agent, text, []);
    // The agents it awaits see it too (1.3), whether or not its text names them.
    const seenBy = [...reading.mentions, ...awaited.filter((p) => p.kind === 'agent').map((p) => p.name)];
    const audience = r.audience(room, agent, seenBy, null);
    const m = r.record(room, {
      author: agent,
      kind: 'agent',
      text,
      mentions: reading.mentions,
      asks: [],
      audience,
      edit: false,
    });
    r.route(room, m, null, reading.noProgress);
    if (awaited.length > 0 && controlOf(room).holder === 'agents') {
      r.openRequest(room, {
        requester: agent,
        origin: from,
        parent: turn.ask.requests[0] ?? null,
        text,
        seq: m.seq,
        awaited,
        opener: { people: turn.people, audience: turn.ask.audience, root: rootOf(turn.ask) },
      });
    }
    r.out.push({ kind: 'action', result: 'posted' });
  }

  /** Rule 3: how the turn ended. `reply` null: it was stopped. */
  private finish(room: Room, turn: Turn, reply: Reply | null): void {
    const r = this.rules;
    const { ask } = turn;
    // 17.5: parked while it acted (its card waits): its outcome is not the room's any more.
    if (room.turn !== turn) return;
    room.turn = null;
    if (turn.stop || reply === null) {
      if (turn.stop === 'operator')
        for (const id of ask.requests) r.answer(id, ask.agent, 'stopped', 'was stopped by an operator');
      return;
    }
    if (reply.kind === 'fail') {
      room.log.push({ type: 'failed', agent: ask.agent });
      for (const id of ask.requests) r.answer(id, ask.agent, 'failed', reply.reason);
      r.line(room, { kind: 'failure', agent: ask.agent });
      return;
    }
    if (controlOf(room).holder === 'humans') return;
    const outcome = classifyReply(reply.text);
    if (reply.roundLimit) {
      const said = outcome.kind === 'pass' ? '' : outcome.text;
      const line = { kind: 'hand-back' as const, reason: 'tool round limit', agent: ask.agent };
      if (said) this.post(room, turn, said, 'round-limit');
      else r.handBack(room, 'tool round limit', line, turn.startedAt);
      return;
    }
    if (outcome.kind === 'pass') {
      for (const id of ask.requests) r.answer(id, ask.agent, 'pass', '');
      return;
    }
    if (outcome.kind === 'world-pass' && !outcome.text) {
      r.handBack(room, 'world pass', { kind: 'hand-back', reason: 'world pass', agent: ask.agent }, turn.startedAt);
      return;
    }
    this.post(room, turn, outcome.text, outcome.kind === 'world-pass' ? 'world-pass' : 'route');
  }

  /**
   * A reply is posted through the agent's identity, stored, and followed up (3.2, 3.3, 3.6, 3.7, 4) — or, while the
   * platform keeps failing, waits for it (3.7), and the room with it.
   */
  private post(room: Room, turn: Turn, text: string, after: 'route' | 'world-pass' | 'round-limit'): void {
    const r = this.rules;
    const { ask } = turn;
    if (r.stallNext.delete(room.key)) {
      room.stalled = { turn, text, after };
      return;
    }
    r.out.push({ kind: 'post', room: room.key, agent: ask.agent, text });
    if (r.failNext.delete(room.key)) {
      r.handBack(room, 'post failed', { kind: 'hand-back', reason: 'post failed', agent: ask.agent }, turn.startedAt);
      return;
    }
    this.landed(room, turn, text, after);
  }

  /** The platform took the reply that waited: it is posted and followed up as any reply. */
  private through(room: Room): void {
    const stalled = room.stalled;
    if (!stalled) return;
    room.stalled = null;
    this.rules.coverage.add('a reply that waited for the platform');
    this.rules.out.push({ kind: 'post', room: room.key, agent: stalled.turn.ask.agent, text: stalled.text });
    this.landed(room, stalled.turn, stalled.text, stalled.after);
  }

  /** A reply on the platform: stored as the agent's message, then routed (4) or handed back (3.3, 3.6). */
  private landed(room: Room, turn: Turn, text: string, after: 'route' | 'world-pass' | 'round-limit'): void {
    const r = this.rules;
    const { ask } = turn;
    const reading = readAgentReply(this.world, room, ask.agent, text, turn.people);
    const asks = after === 'route' ? reading.asks : [];
    const audience = r.audience(room, ask.agent, reading.mentions, ask.audience);
    const m = r.record(room, {
      author: ask.agent,
      kind: 'agent',
      text,
      mentions: reading.mentions,
      asks,
      audience,
      edit: false,
    });
    if (ask.audience && audience) r.coverage.add('privacy on with a private exchange');
    // 4.5: the round is over (observers of newer messages, another round, stay).
    if (isObserver(ask)) room.queue = room.queue.filter((a) => !(isObserver(a) && a.about <= ask.about));
    if (after !== 'route') for (const id of ask.requests) r.answer(id, ask.agent, 'answer', text);
    if (after === 'world-pass') {
      const line = { kind: 'hand-back' as const, reason: 'world pass', agent: ask.agent };
      if (controlOf(room).holder === 'agents') r.handBack(room, 'world pass', line, turn.startedAt);
      return;
    }
    if (after === 'round-limit') {
      const line = { kind: 'hand-back' as const, reason: 'tool round limit', agent: ask.agent };
      r.handBack(room, 'tool round limit', line, turn.startedAt);
      return;
    }
    r.route(room, m, turn, reading.noProgress);
  }

  /** Rule 5.4: the earliest deadline of an open request. */
  private deadline(): void {
    const r = this.rules;
    const request = r.requests
      .filter((q) => q.status === 'open')
      .sort((a, b) => a.deadline - b.deadline || a.id - b.id)[0];
    if (!request) return;
    r.now = Math.max(r.now, request.deadline);
    const room = r.room(request.target);
    r.inRoom(room.key, () => {
      const turn = room.turn;
      if (turn?.ask.requests.includes(request.id)) {
        if (turn.ask.questions.length === 0) turn.stop = 'deadline';
        else turn.ask.requests = turn.ask.requests.filter((id) => id !== request.id);
      }
      const late = request.awaited.filter((p) => !request.answers.some((a) => same(a.participant, p.name)));
      if (late.length > 0) r.coverage.add('a deadline that fired on an open request');
      if (late.length > 0) r.line(room, { kind: 'deadline', request: request.id, late: late.map((p) => p.name) });
      r.settle(request, 'expired');
    });
  }

  /** Rule 8 (operators only). */
  private command(room: Room, name: string, args: string, operator: boolean): void {
    const r = this.rules;
    if (!operator) return;
    const arg = args.trim().replace(/^@/, '');
    if (name === 'privacy') {
      const mode = arg.toLowerCase();
      if (mode === 'off' || mode === 'mentions') room.log.push({ type: 'privacy', mode });
      return;
    }
    if (name === 'status') return;
    const named = arg ? r.agent(arg) : undefined;
    if (arg && !named) return;
    if (named) {
      if (room.turn && !room.turn.stop && same(room.turn.ask.agent, named)) {
        room.turn.stop = 'operator';
        r.coverage.add('an operator command that stopped something');
      }
      return;
    }
    // 8.1: a reply still waiting for the platform is dropped (never posted).
    if (room.stalled) this.rules.coverage.add('an operator dropped a reply that waited for the platform');
    room.stalled = null;
    const stopped = room.turn && !room.turn.stop ? [room.turn.ask] : [];
    // The questions not yet started are named (the turn stopped got its turn, stopped in sight of the room).
    const drops = questionsOf(room.queue);
    if (stopped.length + room.queue.length + r.open(room.key).length > 0)
      r.coverage.add('an operator command that stopped something');
    denyCards(r, room, name === 'pass' ? 'pass' : 'reset');
    if (stopped.length > 0) room.turn = null;
    room.queue = [];
    r.closeRequests(room);
    r.dropped(room, drops);
    if (name === 'pass') {
      r.out.push({ kind: 'hand-back', room: room.key, reason: '/pass' });
      room.log.push({ type: 'control', holder: 'humans', reason: '/pass' });
    } else {
      room.log.push({ type: 'control', holder: 'agents' }, { type: 'reset' });
    }
  }

  /**
   * Rule 12: the turn being written is taken again first — unless stopped, cut too often, or superseded by what was
   * missed meanwhile (the room holds until its catch-up is done).
   */
  private restart(room: Room): void {
    const r = this.rules;
    room.log.push({ type: 'missed' });
    const turn = room.turn;
    if (!turn) return;
    r.coverage.add('a restart with a turn in flight');
    room.turn = null;
    if (turn.stop) {
      if (turn.stop === 'operator')
        for (const id of turn.ask.requests) r.answer(id, turn.ask.agent, 'stopped', 'was stopped by an operator');
      return;
    }
    if (turn.attempts >= MAX_CUTS) {
      for (const id of turn.ask.requests) r.answer(id, turn.ask.agent, 'failed', 'its turn was cut by restarts');
      r.line(room, { kind: 'cut', agent: turn.ask.agent });
      return;
    }
    turn.ask.attempts = turn.attempts;
    room.queue.unshift(turn.ask);
    if (room.cards.some((c) => c.ask === turn.ask.id && c.status === 'waiting'))
      r.coverage.add('a card waiting through a restart');
  }

  /** For the test's drain: rooms with a turn being written, rooms with a reply waiting, rooms holding, open requests. */
  busyRooms(): string[] {
    return [...this.rules.rooms.values()].filter((room) => room.turn !== null).map((room) => room.key);
  }

  stalledRooms(): string[] {
    return [...this.rules.rooms.values()].filter((room) => room.stalled !== null).map((room) => room.key);
  }

  heldRooms(): string[] {
    return [...this.rules.rooms.values()].filter((room) => holding(room)).map((room) => room.key);
  }

  openRequests(): number {
    return this.rules.requests.filter((q) => q.status === 'open').length;
  }
}

/** The humans' questions in these asks, by agent (for the dropped-questions line). */
function questionsOf(asks: readonly Ask[]): Array<{ agent: string; humans: string[] }> {
  let drops: Array<{ agent: string; humans: string[] }> = [];
  for (const ask of asks) {
    if (ask.questions.length > 0)
      drops = joinDrops(drops, [{ agent: ask.agent, humans: ask.questions.map((q) => q.human) }]);
  }
  return drops;
}
