/**
 * The machine under test: src/room's decide, driven through the script language with the shell's semantics
 * (script.ts). Each room's state is saved and loaded as JSON between events, as the store does.
 */
import { rootOf } from '../../src/room/approvals.js';
import { decide } from '../../src/room/decide.js';
import type { DecideContext, Decision, Effect } from '../../src/room/effects.js';
import type { RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../src/room/state.js';
import { classifyLine, classifyTell } from './lines.js';
import {
  APPROVAL_TIMEOUT_MS,
  accessOf,
  dmRoom,
  frameOf,
  MAIN,
  type Observed,
  type Oracle,
  type Reply,
  SIDE,
  type Step,
  type System,
  type World,
} from './script.js';

interface Room {
  readonly setup: RoomSetup;
  state: RoomState;
  /** Human messages: platform id, author, when, and the agents they addressed (for edits). */
  readonly said: Array<{ id: string; author: string; at: number; addressed: string[] }>;
}

interface Queued {
  readonly room: string;
  readonly event: RoomEvent;
}

export type Decide = (setup: RoomSetup, state: RoomState, event: RoomEvent, context: DecideContext) => Decision;

export interface MachineOptions {
  /**
   * Saves and loads each room's state as JSON between events, as the store does (default on); `restart`: only when
   * the bridge restarts (cheaper, for long generated runs).
   */
  readonly roundTrip?: boolean | 'restart';
  /** The decision to drive (default: src/room's decide; the mutation tests pass wrapped ones). */
  readonly decide?: Decide;
  /** Sees every decision, for checks that read the machine's own records. */
  readonly tap?: (room: string, event: RoomEvent, decision: Decision) => void;
}

export class MachineSystem implements System {
  private readonly rooms = new Map<string, Room>();
  private readonly used = new Map<string, number>();
  private nextRequestId = 1;
  private nextPlatformId = 1;
  private now = 1_000_000;
  private readonly timers: Array<{ at: number; room: string; request: number }> = [];
  private readonly settled = new Set<number>();
  private readonly failNext = new Set<string>();
  /** Rooms whose next reply keeps failing, and the reply each room's platform keeps failing now. */
  private readonly stallNext = new Set<string>();
  private readonly stalled = new Map<string, number>();
  private readonly internal: Queued[] = [];
  private observed: Observed[] = [];
  /** Rule 17: approval deadlines set (room, card), and the held calls by the runner's token. */
  private readonly approvalTimers: Array<{ at: number; room: string; id: string }> = [];
  private readonly calls = new Map<string, { room: string; agent: string; tool: string; input: string }>();
  private nextToken = 1;
  /** The step is an /approve or /deny: its answer is observed. */
  private answering = false;

  constructor(
    private readonly world: World,
    private readonly oracle: Oracle,
    private readonly options: MachineOptions = {},
  ) {}

  private setupOf(key: string): RoomSetup {
    const dm = /^chat:dm-([^-]+)-(.+)$/.exec(key);
    const agent = dm ? this.world.agents.find((a) => a.name.toLowerCase() === dm[1]) : undefined;
    return {
      key,
      agents: this.world.agents.map((a) => ({ name: a.name, activation: a.activation })),
      turnLimit: this.world.turnLimit,
      kind: agent ? 'direct' : 'room',
      ...(agent ? { directAgent: agent.name } : {}),
      privacy: this.world.privacy,
      requestTimeoutMs: this.world.timeoutMs,
      editWindowMs: this.world.editWindowMs,
      maxToolRounds: this.world.maxToolRounds,
      batching: false,
      approvalTimeoutMs: APPROVAL_TIMEOUT_MS,
    };
  }

  private room(key: string): Room {
    let room = this.rooms.get(key);
    if (!room) {
      room = { setup: this.setupOf(key), state: EMPTY_STATE, said: [] };
      this.rooms.set(key, room);
    }
    return room;
  }

  /** The rooms that have had an event. */
  roomKeys(): string[] {
    return [...this.rooms.keys()];
  }

  /** The room's state (as the store would load it). */
  state(key: string): RoomState {
    return this.room(key).state;
  }

  step(step: Step): Observed[] {
    this.observed = [];
    this.now += 1000;
    this.answering = step.kind === 'command' && (step.name === 'approve' || step.name === 'deny');
    switch (step.kind) {
      case 'say': {
        const id = `p${this.nextPlatformId++}`;
        this.feed(step.room, {
          type: 'message',
          now: this.now,
          message: {
            author: step.human,
            authorId: `u-${step.human}`,
            kind: 'human',
            text: step.text,
            platformIds: [id],
            at: this.now,
            ...(step.addressed ? { addressed: step.addressed } : {}),
            ...(step.missed ? { missed: true } : {}),
            // As the shell reads the access policy (rule 16.1).
            ...accessOf(this.world, step.room, step.human),
          },
        });
        break;
      }
      case 'caught-up':
        this.feed(step.room, { type: 'catch-up', now: this.now, phase: 'done' });
        break;
      case 'edit': {
        const said = this.room(step.room).said;
        const original = said[said.length - step.back];
        if (!original) break;
        const at = step.late ? original.at + this.world.editWindowMs + 1 : this.now;
        this.feed(step.room, {
          type: 'edit',
          now: this.now,
          edit: {
            author: original.author,
            authorId: `u-${original.author}`,
            kind: 'human',
            text: step.text,
            platformIds: [`${original.id}:edit:${this.nextPlatformId++}`],
            originalAt: original.at,
            at,
            addressedBefore: [...original.addressed],
            ...accessOf(this.world, step.room, original.author),
          },
        });
        break;
      }
      case 'deliver':
        this.deliver(step.room);
        break;
      case 'command':
        this.feed(step.room, {
          type: 'command',
          now: this.now,
          command: {
            id: 'c',
            name: step.name,
            args: step.args,
            user: step.user ?? 'op',
            // As the platform gives it: a person's own id (a namesake has another).
            userId: step.user ? `${step.namesake ? 'n' : 'u'}-${step.user}` : 'u-op',
            isOperator: step.operator,
          },
        });
        break;
      case 'approval-asked': {
        // The turn runner holds a call only while it writes the turn.
        const current = this.state(step.room).current;
        if (!current || current.post !== undefined) break;
        const token = `t${this.nextToken++}`;
        const { agent } = current.ask;
        this.calls.set(token, { room: step.room, agent, tool: step.tool, input: step.input });
        this.feed(step.room, {
          type: 'approval',
          now: this.now,
          request: {
            ask: current.ask.id,
            agent,
            tool: step.tool,
            input: step.input,
            token,
            ...(step.tooLong ? { tooLong: true } : {}),
          },
        });
        break;
      }
      case 'approval-expires': {
        // The shell's timer of a card answered or gone does not fire (nothing waits on it).
        const waiting = this.approvalTimers.filter((t) =>
          (this.state(t.room).approvals ?? []).some((a) => a.id === t.id && a.status === 'waiting'),
        );
        waiting.sort((a, b) => a.at - b.at);
        const timer = waiting[0];
        if (!timer) break;
        this.approvalTimers.splice(this.approvalTimers.indexOf(timer), 1);
        this.now = Math.max(this.now, timer.at);
        this.feed(timer.room, { type: 'approval-expired', now: this.now, id: timer.id });
        break;
      }
      case 'deadline': {
        this.timers.sort((a, b) => a.at - b.at || a.request - b.request);
        const timer = this.timers.shift();
        if (!timer) break;
        this.now = Math.max(this.now, timer.at);
        this.feed(timer.room, { type: 'deadline', now: this.now, request: timer.request });
        break;
      }
      case 'restart':
        // As the bridge starts: each room goes on from its stored state, then (nothing was missed) its catch-up is done.
        this.timers.length = 0;
        this.approvalTimers.length = 0;
        if (this.options.roundTrip !== false) for (const room of this.rooms.values()) room.state = stored(room.state);
        for (const key of [...this.rooms.keys()]) this.feed(key, { type: 'restart', now: this.now });
        for (const key of [...this.rooms.keys()]) this.feed(key, { type: 'catch-up', now: this.now, phase: 'done' });
        break;
      case 'post-fails':
        this.failNext.add(step.room);
        break;
      case 'reply-stalls':
        this.stallNext.add(step.room);
        break;
      case 'reply-through': {
        const id = this.stalled.get(step.room);
        const post = this.state(step.room).posts.find((p) => p.id === id);
        this.stalled.delete(step.room);
        if (!post) break;
        this.observed.push({ kind: 'post', room: step.room, agent: post.agent ?? 'system', text: post.text });
        const ids = [`p${this.nextPlatformId++}`];
        this.feed(step.room, { type: 'posted', now: this.now, post: post.id, platformIds: ids });
        break;
      }
    }
    return this.observed;
  }

  /**
   * The room's turn being written answers: its actions first, then its text. A turn the room asked to stop (an
   * operator, a deadline) ends as stopped: it takes no reply and runs no action.
   */
  private deliver(key: string): void {
    const current = this.state(key).current;
    if (!current || current.post !== undefined) return;
    const { ask } = current;
    if (current.stop === 'operator' || current.stop === 'deadline') {
      this.feed(key, { type: 'answer', now: this.now, ask: ask.id, outcome: { kind: 'stopped' } });
      return;
    }
    const agent = ask.agent;
    const n = this.used.get(agent) ?? 0;
    this.used.set(agent, n + 1);
    const reply: Reply = this.oracle[agent]?.[n] ?? { kind: 'text', text: '[pass]' };
    if (reply.kind === 'fail') {
      this.feed(key, { type: 'answer', now: this.now, ask: ask.id, outcome: { kind: 'failed', reason: reply.reason } });
      return;
    }
    const canAct = this.world.agents.find((a) => a.name === agent)?.actions === true;
    for (const action of canAct ? (reply.actions ?? []) : []) {
      const from = {
        agent,
        room: key,
        ask: ask.id,
        requests: ask.requests,
        people: ask.people ?? [],
        audience: ask.audience,
        // As the shell gives it: the human the turn acts for (rule 17).
        root: rootOf(ask),
      };
      if (action.kind === 'channel') {
        const target = action.room === 'here' ? key : key === MAIN ? SIDE : MAIN;
        this.feed(target, {
          type: 'action',
          now: this.now,
          action: {
            kind: 'post',
            call: 'call',
            from,
            text: action.text,
            requestReply: [...action.requestReply],
            roomsOnly: true,
          },
        });
      } else {
        if (this.world.agents.some((a) => a.name.toLowerCase() === action.to.toLowerCase())) continue;
        this.feed(dmRoom(agent, action.to), {
          type: 'action',
          now: this.now,
          action: {
            kind: 'post',
            call: 'call',
            from,
            text: action.text,
            requestReply: action.requestReply ? [action.to] : [],
          },
        });
      }
    }
    this.feed(key, {
      type: 'answer',
      now: this.now,
      ask: ask.id,
      outcome: { kind: 'reply', text: reply.text, ...(reply.roundLimit ? { roundLimit: true } : {}) },
    });
  }

  /** Handles an event and everything it sets off inside the bridge. */
  private feed(key: string, event: RoomEvent): void {
    this.internal.push({ room: key, event });
    while (this.internal.length > 0) {
      const next = this.internal.shift() as Queued;
      this.handle(next.room, next.event);
    }
  }

  private handle(key: string, event: RoomEvent): void {
    const room = this.room(key);
    const decision = (this.options.decide ?? decide)(room.setup, room.state, event, {
      nextRequestId: this.nextRequestId,
    });
    this.options.tap?.(key, event, decision);
    this.nextRequestId += decision.requestsOpened;
    // Saved and loaded as the store does between any two events (unless a test compares with that switched off).
    room.state = (this.options.roundTrip ?? true) === true ? stored(decision.state) : decision.state;
    for (const write of decision.writes) {
      if (write.type === 'message' && write.message.kind === 'human') {
        // An edit stored as a message is still the platform's one message: later edits see whom it added.
        const id = write.message.platformIds[0] ?? '';
        const edited = room.said.find((s) => id.startsWith(`${s.id}:edit:`));
        const { author, at, mentions } = write.message;
        if (edited) edited.addressed.push(...mentions);
        else room.said.push({ id, author, at, addressed: [...mentions] });
      }
      if (write.type === 'request') {
        if (write.request.status !== 'open') {
          // A settled request's deadline will not fire (the shell clears its timer).
          this.settled.add(write.request.id);
          const at = this.timers.findIndex((t) => t.request === write.request.id);
          if (at >= 0) this.timers.splice(at, 1);
        }
        this.observed.push({
          kind: 'request',
          id: write.request.id,
          status: write.request.status,
          answers: write.request.answers.map((a) => ({ participant: a.participant, outcome: a.outcome, text: a.text })),
        });
      }
    }
    for (const effect of decision.effects) this.effect(key, effect);
  }

  private effect(key: string, effect: Effect): void {
    switch (effect.type) {
      case 'ask':
        for (const turn of effect.turns) {
          const { ask } = turn;
          this.observed.push({
            kind: 'ask',
            room: key,
            agent: ask.agent,
            reason: ask.reason,
            about: ask.about,
            requests: [...ask.requests],
            humans: ask.questions.map((q) => q.human),
            ...(ask.resume ? { resumes: ask.resume.id } : {}),
            frame: frameOf(turn.situation),
          });
        }
        return;
      case 'post': {
        const { post } = effect;
        // A reply the platform keeps failing waits (the shell tries it again), across a restart's resend too.
        if (post.purpose === 'reply' && this.stalled.get(key) === post.id) return;
        if (post.purpose === 'reply' && this.stallNext.delete(key)) {
          this.stalled.set(key, post.id);
          return;
        }
        if (post.agent === null) this.observed.push({ kind: 'line', room: key, line: classifyLine(post.text) });
        else this.observed.push({ kind: 'post', room: key, agent: post.agent, text: post.text });
        if (this.failNext.delete(key)) {
          this.internal.push({
            room: key,
            event: { type: 'post-failed', now: this.now, post: post.id, reason: 'refused' },
          });
        } else {
          const ids = [`p${this.nextPlatformId++}`];
          this.internal.push({ room: key, event: { type: 'posted', now: this.now, post: post.id, platformIds: ids } });
        }
        return;
      }
      case 'drop-post':
        if (this.stalled.get(key) === effect.post) this.stalled.delete(key);
        return;
      case 'note':
        this.internal.push({ room: effect.room, event: { type: 'note', now: this.now, note: effect.note } });
        return;
      case 'timer':
        if (!this.settled.has(effect.request) && !this.timers.some((t) => t.request === effect.request)) {
          this.timers.push({ at: effect.at, room: key, request: effect.request });
        }
        return;
      case 'tell':
        this.observed.push({ kind: 'tell', room: key, human: effect.user.name, ...classifyTell(effect.text) });
        return;
      case 'action-result':
        this.observed.push({ kind: 'action', result: effect.result.kind });
        return;
      case 'record':
        if (effect.record.kind === 'hand-back') {
          this.observed.push({ kind: 'hand-back', room: key, reason: effect.record.reason });
        }
        if (effect.record.kind === 'approval') {
          const { id, status, by } = effect.record;
          this.observed.push({ kind: 'approval-record', room: key, id, status, ...(by ? { by } : {}) });
        }
        return;
      case 'approval-timer':
        if (!this.approvalTimers.some((t) => t.room === key && t.id === effect.id))
          this.approvalTimers.push({ at: effect.at, room: key, id: effect.id });
        return;
      case 'approval-result': {
        const call = this.calls.get(effect.token);
        if (!call) throw new Error(`an approval's answer for a call nobody held (${effect.token})`);
        const { approved, reason } = effect;
        this.observed.push({ kind: 'approval-result', ...call, approved, reason });
        return;
      }
      case 'answer':
        if (this.answering) this.observed.push({ kind: 'approval-answer', room: key, text: effect.text });
        return;
      default:
        return;
    }
  }
}

/** A state as the store gives it back: saved as JSON and loaded. */
const stored = (state: RoomState): RoomState => JSON.parse(JSON.stringify(state)) as RoomState;
