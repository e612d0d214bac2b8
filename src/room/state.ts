/**
 * A room's state as `decide` keeps it: small, plain, serialisable (JSON), and enough to make every decision without
 * reading the room's history. The shell stores it with each decision and loads it after a restart.
 */
import type {
  AuthorKind,
  BatchAnswer,
  ChatRequest,
  Opener,
  Participant,
  RequestAnswer,
  Root,
  SettledRequest,
  ToolRun,
} from './events.js';

export type { ChatRequest, Opener, Root };

export type PrivacyMode = 'off' | 'mentions';

/** What the router needs to know about an agent. */
export interface AgentProfile {
  readonly name: string;
  readonly activation: 'always' | 'mention';
  /** Agents that may share a batched call (same endpoint, model and key); absent: never batched. */
  readonly batchGroup?: string | undefined;
}

/** A room's fixed facts: configuration, not state. */
export interface RoomSetup {
  readonly key: string;
  /** In configured order (agent files sorted by name). */
  readonly agents: readonly AgentProfile[];
  readonly turnLimit: number;
  /** `direct`: a DM with one agent; `pair`: a private chat between two agents. */
  readonly kind: 'room' | 'direct' | 'pair';
  readonly directAgent?: string | undefined;
  readonly pair?: readonly [string, string] | undefined;
  /** The configured privacy (PRIVACY, PRIVACY_ROOMS); an operator's /privacy wins. */
  readonly privacy: PrivacyMode;
  readonly requestTimeoutMs: number;
  readonly editWindowMs: number;
  readonly maxToolRounds: number;
  /** BATCHING=on: a round's observers may be asked in one batched call. */
  readonly batching: boolean;
  /** How long an approval waits before it is a denial (APPROVAL_TIMEOUT_S); default 30 minutes. */
  readonly approvalTimeoutMs?: number | undefined;
  /** How long a private chat request waits for its answer (CHAT_REQUEST_TIMEOUT_S); default 10 minutes. */
  readonly chatRequestTimeoutMs?: number | undefined;
}

/** Why an agent is asked. */
export type Reason =
  | 'direct'
  | 'awaiting'
  | 'addressed'
  | 'request'
  | 'resume'
  | 'always'
  | 'mentioned'
  | 'chat-request';

/** A human's question an ask answers. */
export interface Question {
  readonly human: string;
  /** The message that asked (its seq). */
  readonly seq: number;
  /** The platform user id of the human (who may approve what the turn answering them does: rule 17). */
  readonly id?: string | undefined;
}

/** A tool call of the current turn waiting for a person's approval, or approved and not yet run (rule 17). */
export interface PendingApproval {
  /** Room-local (`A1`, `A2`, …), never reused: `/approve A1`. */
  readonly id: string;
  readonly ask: number;
  readonly agent: string;
  readonly tool: string;
  /** Exactly what runs (the command; the target and text), as the card shows it. */
  readonly input: string;
  /** The turn runner's handle for the answer (a turn taken again after a restart asks again with a new one). */
  readonly token: string;
  /** The human whose message started the turn: they may approve it, besides operators; absent: operators only. */
  readonly root?: Root | undefined;
  /** Why only an operator may answer it (the call acts where its root could not). */
  readonly operatorsOnly?: string | undefined;
  readonly at: number;
  readonly expiresAt: number;
  /** Denied while its turn waited in the queue (parked): the turn taken again reads the denial, not a new card. */
  readonly status: 'waiting' | 'approved' | 'denied';
  readonly reason?: string | undefined;
  /** Who approved it (its closed card says so). */
  readonly by?: string | undefined;
  /** The card's post (outbox id), then its message on the platform: answered, it is closed (its buttons go). */
  readonly post?: number | undefined;
  readonly platformId?: string | undefined;
}

/** One turn one agent is to take. */
export interface Turn {
  /** Room-local, never reused. */
  readonly id: number;
  readonly agent: string;
  readonly reason: Reason;
  /** The message it is about (seq; 0 when none, a chat request) and that message's author. */
  readonly about: number;
  readonly author: string;
  /** The humans whose questions it answers. */
  readonly questions: readonly Question[];
  /** The requests it answers (their ids). */
  readonly requests: readonly number[];
  /** A `resume`: the settled request, with every answer. */
  readonly resume?: SettledRequest | undefined;
  /** A `chat-request`: the private chat request to accept or decline. */
  readonly chat?: { readonly id: number; readonly from: string; readonly reason: string } | undefined;
  /** The exchange's audience under privacy (what its reply may be seen by); null: public. */
  readonly audience: readonly string[] | null;
  /** Asked for by an agent on a human's behalf (a request, a resume): that human (rule 17). */
  readonly root?: Root | undefined;
  /**
   * The trace of the message that started its chain (W3C traceparent, made by the shell; opaque here): kept in the
   * state so that a turn taken again after a restart, or on another replica, joins the same trace.
   */
  readonly trace?: string | undefined;
  /** Created by an agent's message (observers, awaiting): a human message removes it while queued. */
  readonly fromAgent: boolean;
  /** Made by a message a catch-up fetched: it waits until the catch-up is done. */
  readonly held?: boolean | undefined;
  /** Once started: the room's seq when it started, the people its reply answers, how many times it was started. */
  readonly startedAt?: number | undefined;
  readonly people?: readonly string[] | undefined;
  /**
   * Once started: the requester of each request it answers. A turn taken again after a restart still answers them
   * when a request settled meanwhile (it left the room's requests; rule 2.4).
   */
  readonly requesters?: ReadonlyArray<{ readonly id: number; readonly requester: string }> | undefined;
  readonly attempt: number;
  /**
   * Its turn waited for an approval and gave the room to the next question (rule 17.5): taken again once its card is
   * answered, with its journal (what it ran already is not run twice).
   */
  readonly parked?: true | undefined;
}

/** The ask being carried out: a turn being written, or its reply being posted. */
export interface Current {
  readonly ask: Turn;
  /** Set when the room asked for the turn to stop (its reply, if it comes, is not posted). */
  readonly stop?: 'operator' | 'deadline' | 'control' | undefined;
  /** Its reply's post, once written (outbox id), and what follows the post. */
  readonly post?: number | undefined;
  readonly after?: 'route' | 'world-pass' | 'round-limit' | undefined;
}

/** A request awaiting answers in this room (its target room). */
export interface OpenRequest {
  readonly id: number;
  readonly requester: string;
  readonly origin: string;
  readonly parent: number | null;
  readonly text: string;
  /** The request message's seq in this room. */
  readonly seq: number;
  readonly awaited: readonly Participant[];
  readonly answers: readonly RequestAnswer[];
  readonly openedAt: number;
  readonly deadline: number;
  readonly opener: Opener;
}

/** A post written down and not known to be sent yet. */
export interface PendingPost {
  readonly id: number;
  readonly agent: string | null;
  readonly text: string;
  /** When it was written (a resend after a restart looks for it on the platform from then on). */
  readonly at: number;
  /** The tool calls of the turn whose reply it is (stored with the message). */
  readonly toolRuns?: readonly ToolRun[] | undefined;
  /** The ask whose reply it is; the action call it answers. */
  readonly ask?: number | undefined;
  /** The trace of the message that started its chain (opaque here): a post re-sent after a restart joins it. */
  readonly trace?: string | undefined;
  readonly call?: string | undefined;
  readonly purpose: 'reply' | 'action' | 'line';
  /** An approval card's line (rule 17): posted with its answers as buttons where the platform has them. */
  readonly card?: { readonly id: string } | undefined;
  /** For an action's post: the request to open here once posted, and who acts. */
  readonly open?:
    | {
        readonly awaited: readonly Participant[];
        readonly requester: string;
        readonly origin: string;
        readonly parent: number | null;
        readonly opener: Opener;
      }
    | undefined;
  /** Who this message asks for a reply, fixed when written (a world pass, an action: nobody). */
  readonly requests?: readonly string[] | undefined;
  /** The exchange the message answers (its audience under privacy). */
  readonly audience?: readonly string[] | null | undefined;
  readonly people?: readonly string[] | undefined;
}

/** A message as the rules read it. */
export interface MessageFacts {
  readonly seq: number;
  readonly author: string;
  readonly kind: AuthorKind;
  readonly mentions: readonly string[];
  readonly requests: readonly string[];
  readonly audience: readonly string[] | null;
  readonly at: number;
}

/** Dropped questions, gathered for one line. */
export interface Dropped {
  readonly agent: string;
  readonly humans: readonly string[];
}

export interface RoomState {
  /** The newest message's seq. */
  readonly seq: number;
  readonly control: {
    readonly holder: 'agents' | 'humans';
    readonly count: number;
    readonly reason?: string | undefined;
  };
  /** Set by an operator's /privacy; null: the configured mode. */
  readonly privacy: PrivacyMode | null;
  /** Humans seen in the room, most recent first (they are mentionable). */
  readonly humans: readonly string[];
  /** The humans each agent's own last message asked (they wake it by answering), by lower-cased agent name. */
  readonly awaiting: Readonly<Record<string, readonly string[]>>;
  /** Each agent's previous message, normalised (no progress when repeated). */
  readonly lastText: Readonly<Record<string, string>>;
  /** The recent agent messages (pair guard, and who spoke since a message). */
  readonly agentPosts: ReadonlyArray<{ readonly author: string; readonly at: number; readonly seq: number }>;
  /** The seq of the newest human message. */
  readonly lastHuman: number;
  /** Agent pairs the room was told about (pair guard), as pair keys. */
  readonly told: readonly string[];
  /** Agents whose turn failed since the newest human message. */
  readonly failed: readonly string[];
  /** The people told why their messages wake nobody here (rule 16), by platform user id; absent in older states. */
  readonly toldAccess?: readonly string[] | undefined;
  /** Tool calls of the current turn waiting for approval, or approved (rule 17); absent in older states. */
  readonly approvals?: readonly PendingApproval[] | undefined;
  /** The next approval's number. */
  readonly nextApproval?: number | undefined;
  readonly queue: readonly Turn[];
  readonly current: Current | null;
  readonly posts: readonly PendingPost[];
  readonly requests: readonly OpenRequest[];
  /** Requests this room's agents opened in other rooms, not settled yet. */
  readonly away: ReadonlyArray<{ readonly id: number; readonly target: string; readonly parent?: number | null }>;
  /** A pair room's private chat requests, oldest first (chats.ts); absent in older states. */
  readonly chats?: readonly ChatRequest[] | undefined;
  /** Older states only: the ids of the chat requests accepted here (now each request in `chats` has its status). */
  readonly accepted?: readonly number[] | undefined;
  /** A catch-up is running: the asks of the messages it fetched wait, and dropped questions are gathered. */
  readonly holding: boolean;
  /** Questions dropped during the catch-up, told in one line when it is done. */
  readonly heldDrops: readonly Dropped[];
  /**
   * Observers asked in one batched call: those whose answers are not applied yet, in configured order; the answers
   * come in as the call's parts are answered (a reply, a pass, or `alone`: it takes a turn of its own); the room's
   * seq when it was asked, and the id the batch is known by (its first ask's).
   */
  readonly batch: {
    readonly asks: readonly Turn[];
    readonly answers: ReadonlyArray<{ readonly ask: number; readonly answer: BatchAnswer }>;
    readonly seq: number;
    readonly id: number;
  } | null;
  readonly nextAsk: number;
  readonly nextPost: number;
}

export const EMPTY_STATE: RoomState = {
  seq: 0,
  control: { holder: 'agents', count: 0 },
  privacy: null,
  humans: [],
  awaiting: {},
  lastText: {},
  agentPosts: [],
  lastHuman: 0,
  told: [],
  failed: [],
  queue: [],
  current: null,
  posts: [],
  requests: [],
  away: [],
  holding: false,
  heldDrops: [],
  batch: null,
  nextAsk: 1,
  nextPost: 1,
};

/**
 * A state stored by an earlier version, as this one reads it: an empty `accepted` (every state had one before the
 * pair rooms held their chat requests) says nothing and is dropped; one with ids is kept, and read as accepted.
 */
export function readOlder(state: RoomState): RoomState {
  if (state.accepted === undefined || state.accepted.length > 0) return state;
  const { accepted: _, ...rest } = state;
  return rest;
}

/**
 * A copy of a room's state, field by field (its arrays and objects are shared: they are never changed in place).
 * Written out so that every copy has one shape, which keeps a busy room's decisions fast.
 */
export function copyState(s: RoomState): RoomState {
  return {
    seq: s.seq,
    control: s.control,
    privacy: s.privacy,
    humans: s.humans,
    awaiting: s.awaiting,
    lastText: s.lastText,
    agentPosts: s.agentPosts,
    lastHuman: s.lastHuman,
    told: s.told,
    failed: s.failed,
    toldAccess: s.toldAccess,
    approvals: s.approvals,
    nextApproval: s.nextApproval,
    queue: s.queue,
    current: s.current,
    posts: s.posts,
    requests: s.requests,
    away: s.away,
    chats: s.chats,
    accepted: s.accepted,
    holding: s.holding,
    heldDrops: s.heldDrops,
    batch: s.batch,
    nextAsk: s.nextAsk,
    nextPost: s.nextPost,
  };
}
