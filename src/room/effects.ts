/**
 * What a decision asks the shell to do (effects) and to store (writes). Effects are carried out after the writes
 * are committed; their outcomes come back as events.
 */
import type { ChatRequest, Note, Participant, RequestAnswer, SettledRequest } from './events.js';
import type { MessageFacts, PendingPost, RoomState, Turn } from './state.js';

/** Why a turn is asked, as its prompt frames it (src/room/situation.ts decides it; the shell renders it). */
export type Situation =
  /** A room message the agent may answer without being asked. */
  | { readonly kind: 'observe' }
  /** Someone asked for its action: a human who named it, and/or request_reply threads. */
  | { readonly kind: 'requested'; readonly requesters: readonly string[]; readonly threads: readonly number[] }
  /** It had asked the author of the newest message, who has now answered. */
  | { readonly kind: 'answered'; readonly by: string }
  /** A private conversation with one human. */
  | { readonly kind: 'direct'; readonly user: string }
  /** Its own request is complete (or expired): the answers follow. */
  | { readonly kind: 'resume'; readonly summary: string }
  /** Another agent asks for a private chat. */
  | { readonly kind: 'chat-request'; readonly from: string; readonly reason: string; readonly id: number };

/** A turn to run: the ask, and what the turn's prompt says about why it runs. */
export interface TurnOrder {
  readonly ask: Turn;
  /** Why it runs, as the prompt frames it (the shell renders it). */
  readonly situation: Situation;
  /** Set when the turn is taken again after a restart (the journal answers its earlier tool calls). */
  readonly again: boolean;
}

export type Effect =
  /** Run these turns: one, or several observers in one batched call. */
  | { readonly type: 'ask'; readonly turns: readonly TurnOrder[] }
  /** Stop a running turn (its outcome still comes back, as `stopped`). */
  | {
      readonly type: 'stop';
      readonly ask: number;
      /** approval: the turn waits for a card and gives the room to the next question (taken again later). */
      readonly reason: 'operator' | 'deadline' | 'control' | 'approval';
    }
  /** Send a post written down (`resend`: after a restart, it may have reached the platform already). */
  | { readonly type: 'post'; readonly post: PendingPost; readonly resend?: boolean | undefined }
  /** Stop trying to send a post still waiting (an operator dropped it). */
  | { readonly type: 'drop-post'; readonly post: number }
  /** The turn's reply will not be posted: remove whatever preview of it is shown. */
  | { readonly type: 'discard'; readonly ask: number }
  /** Tell another room (or this one, later) something: the note is stored with the decision under `id`. */
  | { readonly type: 'note'; readonly id: string; readonly room: string; readonly note: Note }
  /** Deliver a deadline event at `at` (ms since the epoch). */
  | { readonly type: 'timer'; readonly at: number; readonly request: number }
  /** Deliver a private chat request's expiry (`chat-expired`) at `at`. */
  | { readonly type: 'chat-timer'; readonly at: number; readonly chat: number }
  /** An approval's answer for the turn runner holding the tool call (`token`): run it, or refuse it with `reason`. */
  | { readonly type: 'approval-result'; readonly token: string; readonly approved: boolean; readonly reason: string }
  /** Deliver an approval's deadline at `at` (ms since the epoch). */
  | { readonly type: 'approval-timer'; readonly at: number; readonly id: string }
  /** An answered card's message on the platform: its text now says how it ended, and its buttons go. */
  | { readonly type: 'close-card'; readonly platformId: string; readonly text: string }
  /** The result of an agent's messaging action, for the model. */
  | { readonly type: 'action-result'; readonly call: string; readonly result: ActionResult }
  /** An operator command's answer. */
  | { readonly type: 'answer'; readonly command: string; readonly text: string }
  /** Answer an operator's /status with the room as it is. */
  | { readonly type: 'status'; readonly command: string }
  /** Carry out an operator's /budget (show the spending limits, or set one) and answer it. */
  | { readonly type: 'budget'; readonly command: string; readonly args: string }
  /** Remove the room's sandbox (and, with `wipe`, its workspace). */
  | { readonly type: 'reset-sandbox'; readonly wipe: boolean }
  /**
   * Tell one person a line meant for them alone (an ephemeral message where the platform has one, else a line in
   * the room that is not stored): why their message woke nobody (rule 16).
   */
  | { readonly type: 'tell'; readonly user: { readonly id: string; readonly name: string }; readonly text: string }
  /** Forget the room's stored history (the dedupe keys stay). */
  | { readonly type: 'clear-history' }
  /** Why: a message's routing, a pass, a failure, a hand-back, dropped questions (log and operator console). */
  | { readonly type: 'record'; readonly record: DecisionRecord };

export type ActionResult =
  | { readonly kind: 'posted'; readonly request?: number | undefined; readonly awaited?: readonly Participant[] }
  /** The humans have control there (`reason`: why). */
  | { readonly kind: 'refused'; readonly reason: string }
  /** send_channel_message into a DM or a private chat. */
  | { readonly kind: 'private-room' }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly kind: 'done'; readonly text: string }
  /** A chat request made or answered: the request as it is now. */
  | { readonly kind: 'chat'; readonly request: ChatRequest }
  /** The room refused the action (`reason`: what the agent is told). */
  | { readonly kind: 'invalid'; readonly reason: string };

export type DecisionRecord =
  | {
      readonly kind: 'routed';
      readonly seq: number;
      readonly author: string;
      readonly woken: readonly string[];
      /** Agents the author may not wake here (rule 16), and why. */
      readonly refused?: { readonly agents: readonly string[]; readonly why: 'user' | 'channel' } | undefined;
      /** The room's other agents not woken, and why (absent: none). */
      readonly skipped?: readonly Skipped[] | undefined;
      /** The message's trace (W3C traceparent), when the shell traces: the console links to it. */
      readonly trace?: string | undefined;
    }
  /** `about`: the seq of the message the agent's turn was about. */
  | { readonly kind: 'passed'; readonly agent: string; readonly about: number }
  | { readonly kind: 'failed'; readonly agent: string; readonly reason: string; readonly about: number }
  | { readonly kind: 'stopped'; readonly agent: string; readonly reason: string; readonly about: number }
  | { readonly kind: 'hand-back'; readonly reason: string }
  | { readonly kind: 'dropped'; readonly drops: ReadonlyArray<{ agent: string; humans: readonly string[] }> }
  | { readonly kind: 'request'; readonly id: number; readonly status: string }
  /** An approval card (rule 17): asked for whom, then answered by whom (or expired, or denied by /pass). */
  | {
      readonly kind: 'approval';
      readonly id: string;
      readonly agent: string;
      readonly tool: string;
      readonly status: 'asked' | 'approved' | 'denied' | 'expired';
      /** asked: the root it waits for (none: operators); answered: who answered. */
      readonly by?: string | undefined;
    };

/**
 * An agent not woken by a message, and why: its activation (`mention` and not named), privacy (it cannot see the
 * message), the access policy, it answered already (the message completes its request), it is busy with a turn, it
 * failed since the last human message, or the pair guard paused it with the author.
 */
export interface Skipped {
  readonly agent: string;
  readonly why: 'activation' | 'privacy' | 'access' | 'answered' | 'busy' | 'failed' | 'pair-guard';
}

/** A request as the store keeps it (for /status, the console and the tests). */
export interface RequestRow {
  readonly id: number;
  readonly requester: string;
  readonly origin: string;
  readonly target: string;
  readonly parent: number | null;
  readonly text: string;
  readonly awaited: readonly Participant[];
  readonly answers: readonly RequestAnswer[];
  readonly status: 'open' | 'answered' | 'expired' | 'cancelled' | 'closed';
  readonly openedAt: number;
  readonly deadline: number;
  readonly opener: SettledRequest['opener'];
}

/** A message to store, as the rules read it, with its text and platform ids. */
export interface StoredMessage extends MessageFacts {
  readonly authorId: string;
  readonly text: string;
  readonly platformIds: readonly string[];
  /** The outbox entry it was posted from, if any. */
  readonly post?: number | undefined;
  /** The bridge's lines about its uploaded files (not part of `text`: they are never read for mentions). */
  readonly files?: readonly string[] | undefined;
}

export type Write =
  /** Store a message (once: a platform id already stored makes the whole decision a duplicate). */
  | { readonly type: 'message'; readonly message: StoredMessage }
  | { readonly type: 'request'; readonly request: RequestRow }
  /** A settled request's requester resumed (or will not): it is closed. */
  | { readonly type: 'request-status'; readonly id: number; readonly status: 'closed' }
  /** A note for another room, kept until that room has taken it (written with each `note` effect). */
  | { readonly type: 'note'; readonly id: string; readonly room: string; readonly note: Note }
  /** A note this room has taken (written by the decision that took it). */
  | { readonly type: 'note-done'; readonly id: string }
  | { readonly type: 'privacy'; readonly mode: 'off' | 'mentions' | null }
  /** A pair room's chat request as it is now (the store's chat requests, read across pairs: briefings, look). */
  | { readonly type: 'chat-request'; readonly request: ChatRequest }
  /**
   * Why: one of the decision's records, kept for the operator console (written with each `record` effect). `seq`:
   * the message it is about.
   */
  | { readonly type: 'decision'; readonly seq: number; readonly record: DecisionRecord; readonly at: number };

export interface Decision {
  readonly state: RoomState;
  readonly effects: readonly Effect[];
  readonly writes: readonly Write[];
  /** How many request ids it took from the context's `nextRequestId`. */
  readonly requestsOpened: number;
}

/** What a decision may take from outside besides the event: fresh ids. */
export interface DecideContext {
  /** The next unused request id (unique across rooms). */
  readonly nextRequestId: number;
  /**
   * A prefix no other decision is given (the shell makes one per decision): the ids of the notes this decision writes
   * are this prefix and a number. Absent: `room seq`-free ids from the request id (tests that write no notes).
   */
  readonly idBlock?: string | undefined;
}
