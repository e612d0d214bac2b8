/**
 * A decision being made: the room's state as it changes, and the effects and writes collected on the way. `decide`
 * builds one per event and returns what it holds; nothing outside the decision sees it.
 */
import type { DecideContext, Decision, DecisionRecord, Effect, Write } from './effects.js';
import type { Note } from './events.js';
import { copyState, type PendingPost, type PrivacyMode, type RoomSetup, type RoomState } from './state.js';

export const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
export const lower = (name: string): string => name.toLowerCase();

const namesOf = new WeakMap<RoomSetup, readonly string[]>();

export class Draft {
  /** The room's state as this decision changes it: a copy of the state it started from (which it never changes). */
  readonly state: RoomState;
  readonly effects: Effect[] = [];
  readonly writes: Write[] = [];
  private opened = 0;
  private notes = 0;
  private readonly records: DecisionRecord[] = [];

  constructor(
    readonly setup: RoomSetup,
    start: RoomState,
    readonly now: number,
    private readonly context: DecideContext,
  ) {
    this.state = copyState(start);
  }

  /** Changes fields of the draft's state (its arrays and objects are replaced, never changed in place). */
  set(patch: Partial<RoomState>): void {
    Object.assign(this.state, patch);
  }

  effect(effect: Effect): void {
    this.effects.push(effect);
  }

  write(write: Write): void {
    this.writes.push(write);
  }

  /** Why the room decided so: logged by the shell, and kept beside the message it is about (the console's "why"). */
  record(record: DecisionRecord): void {
    this.effects.push({ type: 'record', record });
    this.records.push(record);
  }

  /** Tells another room (or this one, later): stored with this decision, so a crash cannot lose it. */
  note(room: string, note: Note): void {
    const id = `${this.context.idBlock ?? `r${this.context.nextRequestId}`}.${this.notes++}`;
    this.writes.push({ type: 'note', id, room, note });
    this.effects.push({ type: 'note', id, room, note });
  }

  /** A fresh request id, unique across rooms. */
  requestId(): number {
    return this.context.nextRequestId + this.opened++;
  }

  get privacy(): PrivacyMode {
    return this.state.privacy ?? this.setup.privacy;
  }

  /** The configured spelling of an agent, if `name` is one. */
  agent(name: string): string | undefined {
    return this.setup.agents.find((a) => same(a.name, name))?.name;
  }

  /** The agents' names, in configured order (made once per room setup). */
  get names(): readonly string[] {
    let names = namesOf.get(this.setup);
    if (!names) {
      names = this.setup.agents.map((a) => a.name);
      namesOf.set(this.setup, names);
    }
    return names;
  }

  /** Writes a post down and asks for it to be sent. */
  post(post: Omit<PendingPost, 'id' | 'at'>): PendingPost {
    const written: PendingPost = { ...post, id: this.state.nextPost, at: this.now };
    this.set({ nextPost: this.state.nextPost + 1, posts: [...this.state.posts, written] });
    this.effect({ type: 'post', post: written });
    return written;
  }

  /** One of the bridge's own lines. */
  line(text: string): void {
    this.post({ agent: null, text, purpose: 'line' });
  }

  done(): Decision {
    for (const record of this.records) {
      this.writes.push({ type: 'decision', seq: aboutSeq(record, this.state.seq), record, at: this.now });
    }
    return { state: this.state, effects: this.effects, writes: this.writes, requestsOpened: this.opened };
  }
}

/** The message a record is about: the one routed, the one a turn answered, else the room's newest. */
function aboutSeq(record: DecisionRecord, newest: number): number {
  switch (record.kind) {
    case 'routed':
      return record.seq;
    case 'passed':
    case 'failed':
    case 'stopped':
      return record.about;
    default:
      return newest;
  }
}
