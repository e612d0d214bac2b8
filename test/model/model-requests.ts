/**
 * The model's rooms and requests (rule 5): the transcripts, the requests across rooms, the notes between rooms
 * (work done in another room after the room at hand), and the observations both systems are compared on.
 */
import {
  audienceOf,
  controlOf,
  has,
  isObserver,
  joinAudience,
  type Message,
  newAsk,
  privacyOf,
  type Room,
  same,
  seqOf,
  unique,
  waitsForCard,
} from './model-room.js';
import type { LineInfo, Observed, World } from './script.js';

export interface Participant {
  readonly name: string;
  readonly kind: 'agent' | 'human';
}

export interface Request {
  readonly id: number;
  readonly requester: string;
  readonly origin: string;
  readonly target: string;
  readonly parent: number | null;
  readonly text: string;
  readonly seq: number;
  readonly awaited: readonly Participant[];
  readonly answers: Array<{ participant: string; outcome: string; text: string }>;
  readonly deadline: number;
  readonly opener: {
    readonly people: readonly string[];
    readonly audience: readonly string[] | null;
    /** The human the opening turn acted for (rule 17). */
    readonly root: string | null;
  };
  status: 'open' | 'answered' | 'expired' | 'cancelled';
}

export abstract class Ledger {
  readonly rooms = new Map<string, Room>();
  readonly requests: Request[] = [];
  /** Rooms whose next post the platform refuses. */
  readonly failNext = new Set<string>();
  /** Rooms whose next reply keeps failing until `reply-through`. */
  readonly stallNext = new Set<string>();
  /** What the conversation went through (for the generator's coverage). */
  readonly coverage = new Set<string>();
  now = 1_000_000;
  out: Observed[] = [];
  /** Approval cards made in every room so far (rule 17). */
  cardsMade = 0;
  /** Work for other rooms (notes), done after the room at hand, each followed by its room's queue. */
  private readonly tasks: Array<{ room: string; run: () => void }> = [];
  private running = false;
  private nextRequestId = 1;

  constructor(readonly world: World) {}

  /** Starts the room's next ask when it is free (rule 0). */
  abstract advance(room: Room): void;

  agent(name: string): string | undefined {
    return this.world.agents.find((a) => same(a.name, name))?.name;
  }

  room(key: string): Room {
    let room = this.rooms.get(key);
    if (!room) {
      const dm = /^chat:dm-([^-]+)-(.+)$/.exec(key);
      const agent = dm ? this.agent(dm[1] ?? '') : undefined;
      room = {
        key,
        log: [],
        queue: [],
        turn: null,
        stalled: null,
        said: [],
        heldDrops: [],
        cards: [],
        madeCards: 0,
        ...(agent ? { dm: agent } : {}),
      };
      this.rooms.set(key, room);
    }
    return room;
  }

  /** Runs `run` in the room, then the notes it sent, each room's queue going on after its part. */
  inRoom(key: string, run: () => void): void {
    this.tasks.push({ room: key, run });
    if (this.running) return;
    this.running = true;
    try {
      while (this.tasks.length > 0) {
        const task = this.tasks.shift() as { room: string; run: () => void };
        task.run();
        this.advance(this.room(task.room));
      }
    } finally {
      this.running = false;
    }
  }

  record(room: Room, m: Omit<Message, 'type' | 'seq' | 'at'>): Message {
    const message: Message = { ...m, type: 'message', seq: seqOf(room) + 1, at: this.now };
    room.log.push(message);
    return message;
  }

  /** A bridge line: it reaches the platform (or is refused, and is read all the same). */
  line(room: Room, line: LineInfo): void {
    this.out.push({ kind: 'line', room: room.key, line });
    this.failNext.delete(room.key);
    this.record(room, {
      author: 'system',
      kind: 'system',
      text: '',
      mentions: [],
      asks: [],
      audience: null,
      edit: false,
    });
  }

  /**
   * 5.3: a human's message answers the newest open request here that awaits them (as a human: never an agent's
   * place, whatever their name); returns its requester if done.
   */
  humanAnswers(room: Room, human: string, text: string): string[] {
    const request = this.open(room.key)
      .reverse()
      .find((r) => pending(r).some((p) => p.kind === 'human' && same(p.name, human)));
    if (!request) return [];
    this.answer(request.id, human, 'answer', text);
    return request.status === 'answered' ? [request.requester] : [];
  }

  // Rule 5: requests.
  open(target: string): Request[] {
    return this.requests.filter((r) => r.status === 'open' && r.target === target);
  }

  openRequest(room: Room, input: Omit<Request, 'id' | 'target' | 'answers' | 'deadline' | 'status'>): Request {
    const request: Request = {
      ...input,
      id: this.nextRequestId++,
      target: room.key,
      answers: [],
      deadline: this.now + this.world.timeoutMs,
      status: 'open',
    };
    this.requests.push(request);
    this.observe(request);
    if (request.parent !== null) this.coverage.add('a nested request');
    const audience =
      privacyOf(room, this.world) === 'mentions' ? [request.requester, ...request.awaited.map((p) => p.name)] : null;
    for (const p of request.awaited) {
      if (p.kind !== 'agent') continue;
      // 5.1: asked as a participant, never also as an observer; merged into its queued question from a human.
      room.queue = room.queue.filter((a) => !(same(a.agent, p.name) && isObserver(a)));
      const queued = room.queue.find(
        (a) => same(a.agent, p.name) && a.questions.length > 0 && !waitsForCard(room, a.id),
      );
      if (queued) {
        queued.requests = [...queued.requests, request.id];
        queued.about = Math.max(queued.about, input.seq);
        queued.audience = joinAudience(queued.audience, audience);
      } else {
        room.queue.push(
          newAsk({
            agent: p.name,
            reason: 'request',
            about: input.seq,
            author: request.requester,
            requests: [request.id],
            audience,
            root: request.opener.root,
          }),
        );
      }
    }
    return request;
  }

  observe(request: Request): void {
    this.out.push({
      kind: 'request',
      id: request.id,
      status: request.status,
      answers: request.answers.map((a) => ({ ...a })),
    });
  }

  /** 5.2: a participant's first answer counts; the last one settles the request. */
  answer(id: number, participant: string, outcome: string, text: string): void {
    const request = this.requests.find((r) => r.id === id);
    if (request?.status !== 'open') return;
    const awaited = pending(request).find((p) => same(p.name, participant));
    if (!awaited) return;
    request.answers.push({ participant: awaited.name, outcome, text });
    if (pending(request).length === 0) this.settle(request, 'answered');
    else this.observe(request);
  }

  /** A request leaves its room: queued asks lose it; the requester resumes unless it was cancelled. */
  settle(request: Request, status: Request['status']): void {
    request.status = status;
    this.observe(request);
    const room = this.room(request.target);
    // 5.4: queued asks lose it; one left answering nothing goes.
    room.queue = room.queue.flatMap((a) => {
      if (!a.requests.includes(request.id)) return [a];
      const requests = a.requests.filter((r) => r !== request.id);
      return requests.length === 0 && a.questions.length === 0 ? [] : [{ ...a, requests }];
    });
    if (status === 'cancelled') return;
    if (request.origin === request.target) this.resume(request);
    else this.inRoom(request.origin, () => this.resume(request));
  }

  /** 5.5: the requester resumes in the origin room, once, unless the humans have control there. */
  resume(request: Request): void {
    const room = this.room(request.origin);
    const agent = this.agent(request.requester);
    if (controlOf(room).holder === 'humans' || !agent) return;
    const parent = this.requests.find((r) => r.id === request.parent && r.status === 'open' && r.target === room.key);
    const outer =
      parent &&
      has(
        pending(parent).map((p) => p.name),
        agent,
      )
        ? [parent.id]
        : [];
    const resume = newAsk({
      agent,
      reason: 'resume',
      about: seqOf(room),
      author: agent,
      requests: outer,
      audience: request.opener.audience,
      root: request.opener.root,
    });
    room.queue.push({ ...resume, resume: request.id });
  }

  /** 5.6: the requests this room is the origin of are cancelled (with those nested in them); others here expire. */
  closeRequests(room: Room): void {
    for (const request of this.open(room.key)) {
      if (request.status === 'open') this.settle(request, request.origin === room.key ? 'cancelled' : 'expired');
    }
    // Away: opened from here into other rooms, and any request nested in one of them.
    const away = this.requests.filter((r) => r.status === 'open' && r.origin === room.key);
    for (let grew = true; grew; ) {
      const nested = this.requests.filter(
        (r) => r.status === 'open' && !away.includes(r) && away.some((a) => a.id === r.parent),
      );
      away.push(...nested);
      grew = nested.length > 0;
    }
    const byTarget = unique(away.map((r) => r.target));
    for (const target of byTarget) {
      this.inRoom(target, () => {
        for (const request of away.filter((r) => r.target === target)) {
          if (request.status === 'open') this.settle(request, 'cancelled');
        }
      });
    }
  }

  audience(
    room: Room,
    author: string,
    mentions: readonly string[],
    exchange: readonly string[] | null,
  ): string[] | null {
    return audienceOf(room.dm ? 'off' : privacyOf(room, this.world), author, mentions, exchange);
  }
}

export const pending = (request: Request): Participant[] =>
  request.awaited.filter((p) => !request.answers.some((a) => same(a.participant, p.name)));
