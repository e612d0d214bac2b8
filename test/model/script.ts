/**
 * The language both implementations of the rules are driven in: a world (rooms, agents, humans), a script of steps,
 * an agent oracle (what each agent replies, in order), and what can be observed after each step.
 *
 * Shell semantics both sides share: a step's event is handled, then everything it sets off inside the bridge — posts
 * reach the platform at once (unless the step says the platform fails), notes reach their room — before the next
 * step. A turn answers only when a `deliver` step says so; a deadline fires only at a `deadline` step.
 */

import type { Situation } from '../../src/room/effects.js';
import type { CommandName } from '../../src/room/events.js';

export interface WorldAgent {
  readonly name: string;
  readonly activation: 'always' | 'mention';
  /** Tools it may use in its replies' actions. */
  readonly actions: boolean;
}

export interface World {
  readonly agents: readonly WorldAgent[];
  readonly humans: readonly string[];
  readonly turnLimit: number;
  readonly privacy: 'off' | 'mentions';
  /** REPLY_TIMEOUT in ms. */
  readonly timeoutMs: number;
  /** EDIT_WAKE window in ms. */
  readonly editWindowMs: number;
  readonly maxToolRounds: number;
  /** Rule 16: what the access policy says of the humans; absent, everyone may wake every agent. */
  readonly access?: WorldAccess;
}

/** The access policy (ACCESS_USERS, ACCESS_CHANNELS, an agent file's `access:`), as the world's humans meet it. */
export interface WorldAccess {
  /** Humans the policy lets wake no agent (not on the access list). */
  readonly outsiders: readonly string[];
  /** Humans who may wake only these agents (the others' `access:` leaves them out). */
  readonly only?: Readonly<Record<string, readonly string[]>>;
  /** Channels outside ACCESS_CHANNELS: nobody's message there wakes an agent. */
  readonly closed?: readonly string[];
}

/**
 * Rule 16.1, the shell's part: what the policy says of a human's message in a room, handed to both sides as the
 * bridge hands it to the room. A DM is let in or kept out at its door (pairing) before it reaches a room, so the
 * people who write in a DM room here are the ones let in.
 */
export function accessOf(
  world: World,
  room: string,
  human: string,
): { readonly mayWake?: readonly string[]; readonly refused?: 'user' | 'channel' } {
  const access = world.access;
  if (!access || room.startsWith('chat:dm-')) return {};
  if (access.closed?.includes(room)) return { mayWake: [], refused: 'channel' };
  const lower = human.toLowerCase();
  if (access.outsiders.some((h) => h.toLowerCase() === lower)) return { mayWake: [], refused: 'user' };
  const only = Object.entries(access.only ?? {}).find(([h]) => h.toLowerCase() === lower)?.[1];
  if (only === undefined) return {};
  const mayWake = world.agents.filter((a) => only.some((n) => n.toLowerCase() === a.name.toLowerCase()));
  return mayWake.length === world.agents.length ? {} : { mayWake: mayWake.map((a) => a.name), refused: 'user' };
}

/** APPROVAL_TIMEOUT_S as both sides play it (its default, 30 minutes). */
export const APPROVAL_TIMEOUT_MS = 30 * 60_000;

/** Rooms: two channels and the DMs (`dm:<agent>:<human>`). */
export const MAIN = 'chat:main';
export const SIDE = 'chat:side';
export const dmRoom = (agent: string, human: string): string => `chat:dm-${agent.toLowerCase()}-${human.toLowerCase()}`;

/** One thing an agent does during its turn, before its final text. */
export type ReplyAction =
  | {
      readonly kind: 'channel';
      /** `here` (the turn's room), or the other channel. */
      readonly room: 'here' | 'other';
      readonly text: string;
      readonly requestReply: readonly string[];
    }
  | { readonly kind: 'dm'; readonly to: string; readonly text: string; readonly requestReply: boolean };

/** What an agent answers when asked: its actions, then its text — or a failure. */
export type Reply =
  | {
      readonly kind: 'text';
      readonly text: string;
      readonly actions?: readonly ReplyAction[];
      /** The turn ran out of tool rounds. */
      readonly roundLimit?: boolean;
    }
  | { readonly kind: 'fail'; readonly reason: string };

/** Each agent's replies, used in order; an agent with none left passes. */
export type Oracle = Readonly<Record<string, readonly Reply[]>>;

export type Step =
  | {
      readonly kind: 'say';
      readonly room: string;
      readonly human: string;
      readonly text: string;
      /** Agents the platform says it addresses (a reply to an agent's message). */
      readonly addressed?: readonly string[];
      /** Posted while the bridge was away: fetched by a catch-up. */
      readonly missed?: boolean;
    }
  /** The room's catch-up is done (its held asks run). */
  | { readonly kind: 'caught-up'; readonly room: string }
  /** A human edits their `back`-th newest message in the room (1: the newest) to `text`. */
  | {
      readonly kind: 'edit';
      readonly room: string;
      readonly back: number;
      readonly text: string;
      readonly late?: boolean;
    }
  /** The turn being written in the room answers (from the oracle). */
  | { readonly kind: 'deliver'; readonly room: string }
  | {
      readonly kind: 'command';
      readonly room: string;
      readonly name: CommandName;
      readonly args: string;
      readonly operator: boolean;
      /** Who gives it (default an operator named `op`); `namesake`: someone with that display name and another id. */
      readonly user?: string;
      readonly namesake?: boolean;
    }
  /**
   * Rule 17: the turn being written in the room holds a tool call for approval (its agent, this tool and input);
   * `tooLong`: the call cannot be shown in full on a card.
   */
  | {
      readonly kind: 'approval-asked';
      readonly room: string;
      readonly tool: string;
      readonly input: string;
      readonly tooLong?: boolean;
    }
  /** The earliest deadline of an approval card still waiting fires. */
  | { readonly kind: 'approval-expires' }
  /** The earliest deadline fires. */
  | { readonly kind: 'deadline' }
  /** The bridge restarts (every room goes on from its stored state). */
  | { readonly kind: 'restart' }
  /** The room's next post is refused by the platform. */
  | { readonly kind: 'post-fails'; readonly room: string }
  /**
   * The room's next reply keeps failing for a reason that passes (5xx): it waits, tried again by the bridge, and the
   * room waits with it, until `reply-through` (across restarts) or an operator's /pass or /reset drops it.
   */
  | { readonly kind: 'reply-stalls'; readonly room: string }
  /** The platform takes the room's waiting reply now. */
  | { readonly kind: 'reply-through'; readonly room: string };

/** A bridge line, as both sides classify it. */
export type LineInfo =
  | { readonly kind: 'failure'; readonly agent: string }
  | { readonly kind: 'hand-back'; readonly reason: string; readonly agent?: string }
  | { readonly kind: 'deadline'; readonly request: number; readonly late: readonly string[] }
  | { readonly kind: 'pair'; readonly a: string; readonly b: string }
  | { readonly kind: 'dropped'; readonly drops: ReadonlyArray<{ agent: string; humans: readonly string[] }> }
  | { readonly kind: 'cut'; readonly agent: string }
  /** Rule 17: an approval card, and who may answer it (a human's name, or nobody but operators). */
  | {
      readonly kind: 'card';
      readonly id: string;
      readonly agent: string;
      readonly tool: string;
      readonly input: string;
      readonly root: string | null;
    }
  /** A card answered (`approved` / `denied` by someone), or unanswered at its deadline (`expired`). */
  | { readonly kind: 'card-answer'; readonly id: string; readonly status: string; readonly by?: string }
  /** A call too long for a card: refused without one. */
  | { readonly kind: 'card-too-long'; readonly agent: string; readonly tool: string }
  | { readonly kind: 'other'; readonly text: string };

/** What can be observed, in order, after each step. Ids are compared up to renaming. */
export type Observed =
  | {
      readonly kind: 'ask';
      readonly room: string;
      readonly agent: string;
      /** direct, awaiting, addressed, request, resume, always, mentioned. */
      readonly reason: string;
      readonly about: number;
      readonly requests: readonly number[];
      /** The humans whose questions it answers. */
      readonly humans: readonly string[];
      /** A resume: the request it resumes. */
      readonly resumes?: number;
      /**
       * Why it is asked, as its prompt frames it: `observe`, `requested by a,b`, `answered by a`, `direct with a`,
       * `resume`, `chat-request`.
       */
      readonly frame: string;
    }
  | { readonly kind: 'post'; readonly room: string; readonly agent: string; readonly text: string }
  | { readonly kind: 'line'; readonly room: string; readonly line: LineInfo }
  | {
      readonly kind: 'request';
      readonly id: number;
      readonly status: string;
      readonly answers: ReadonlyArray<{ participant: string; outcome: string; text: string }>;
    }
  | { readonly kind: 'hand-back'; readonly room: string; readonly reason: string }
  | { readonly kind: 'action'; readonly result: string }
  /** Rule 17: the answer the turn runner gets for a held call (run it, or refuse it, and why). */
  | {
      readonly kind: 'approval-result';
      readonly room: string;
      readonly agent: string;
      readonly tool: string;
      readonly input: string;
      readonly approved: boolean;
      readonly reason: string;
    }
  /** A card's decision record: asked (for whom), approved, denied, expired (by whom). */
  | {
      readonly kind: 'approval-record';
      readonly room: string;
      readonly id: string;
      readonly status: string;
      readonly by?: string;
    }
  /** The answer to an /approve or /deny, as it reads (done, refused, nothing waiting). */
  | { readonly kind: 'approval-answer'; readonly room: string; readonly text: string }
  /** Rule 16.4: a refused human is told, once per room, which agents their messages do not wake, and why. */
  | {
      readonly kind: 'tell';
      readonly room: string;
      readonly human: string;
      readonly why: 'user' | 'channel';
      readonly agents: readonly string[];
    };

/**
 * A system under test: the machine (src/room decide), the model (test/model), or the whole bridge on a platform
 * (test/e2e), which observes a step once everything it set off has settled.
 */
export interface System {
  step(step: Step): Observed[] | Promise<Observed[]>;
}

/** A turn's situation frame, as the observations name it. */
export function frameOf(situation: Situation): string {
  switch (situation.kind) {
    case 'requested':
      return `requested by ${situation.requesters.join(',')}`;
    case 'answered':
      return `answered by ${situation.by}`;
    case 'direct':
      return `direct with ${situation.user}`;
    default:
      return situation.kind;
  }
}
