/**
 * What happens to a room, as plain data: the events `decide` takes. Time comes in the events (`now`); nothing here
 * reads a clock, a store or a platform. The shell makes these from platform events, operator commands, turn results,
 * post results, timers and other rooms' notes.
 */

export type AuthorKind = 'human' | 'agent' | 'system';

/** One tool call an agent made while writing a message. */
export interface ToolRun {
  readonly tool: string;
  /** What was run: the shell command for bash, the arguments as JSON otherwise. */
  readonly input: string;
  readonly output: string;
}

/** Who a request was opened for: the people its opener's turn answered, that exchange's audience, and its root. */
export interface Opener {
  readonly people: readonly string[];
  readonly audience: readonly string[] | null;
  /** The human whose message started the chain (rule 17: who may approve what the agents asked do). */
  readonly root?: Root | undefined;
  /** The trace of the message that started the chain (W3C traceparent; opaque here): its turns' spans join it. */
  readonly trace?: string | undefined;
}

/** The human whose message started a chain of turns, by platform id. */
export interface Root {
  readonly id: string;
  readonly name: string;
}

/** A message as a platform delivered it, before the rules have read it. */
export interface Incoming {
  readonly author: string;
  readonly authorId: string;
  readonly kind: AuthorKind;
  readonly text: string;
  /** The platform's ids of the message (its dedupe keys). */
  readonly platformIds: readonly string[];
  /** Agents the platform says it addresses beyond its `@` mentions (a human's reply to an agent's message). */
  readonly addressed?: readonly string[] | undefined;
  /** Fetched by a catch-up: posted while nobody listened. */
  readonly missed?: boolean | undefined;
  /**
   * The bridge's lines about the files uploaded with it: stored and shown to the agents with the message, never
   * read for mentions (a file named `@code.txt` wakes nobody).
   */
  readonly files?: readonly string[] | undefined;
  /** When it was posted (ms since the epoch). */
  readonly at: number;
  /**
   * A human's message: the agents its author may wake here (the access policy, read by the shell from what the
   * platform says of them); absent: every agent. Their message is history either way (rule 16).
   */
  readonly mayWake?: readonly string[] | undefined;
  /** Why the other agents may not be woken by them: not on the access list, or not a channel the agents answer in. */
  readonly refused?: 'user' | 'channel' | undefined;
  /** The trace the shell opened for it (W3C traceparent; opaque here): kept with its asks and its routing record. */
  readonly trace?: string | undefined;
}

/** A tool call the turn runner holds until a person approves it (rule 17). */
export interface ApprovalRequest {
  readonly ask: number;
  readonly agent: string;
  readonly tool: string;
  /** Exactly what will run, secrets redacted: shown in full on the card. */
  readonly input: string;
  /** The runner's handle for the answer. */
  readonly token: string;
  /** The card could not show it in full: it cannot be approved. */
  readonly tooLong?: boolean | undefined;
  /** Acting where the human it acts for could not (another room they cannot post in, a DM to someone else): why. */
  readonly operatorsOnly?: string | undefined;
}

/** An edit of an earlier message (only a human's edit may ask anyone: rule 13). */
export interface Edit {
  readonly author: string;
  readonly authorId: string;
  /** Who edited: an agent's edits (its streamed reply growing) and the bridge's are never requests. */
  readonly kind: AuthorKind;
  readonly text: string;
  readonly platformIds: readonly string[];
  readonly addressed?: readonly string[] | undefined;
  /** When the edited message was first posted, and when the edit was made (ms). */
  readonly originalAt: number;
  readonly at: number;
  /** The agents the original message and its earlier edits addressed (the shell looks them up for humans' edits). */
  readonly addressedBefore: readonly string[];
  /** As a message's: the agents its author may wake here (rule 16); absent: every agent. */
  readonly mayWake?: readonly string[] | undefined;
  /** As a message's: why the others may not be woken (the person, or the channel). */
  readonly refused?: 'user' | 'channel' | undefined;
  /** The trace the shell opened for it (W3C traceparent; opaque here): kept with the asks it makes. */
  readonly trace?: string | undefined;
}

/** How one agent's turn ended, as the turn runner reports it. */
export type TurnOutcome =
  | {
      readonly kind: 'reply';
      readonly text: string;
      /** The turn ran out of tool rounds (MAX_TOOL_ROUNDS). */
      readonly roundLimit?: boolean | undefined;
      /** The tool calls it made (stored with its message). */
      readonly toolRuns?: readonly ToolRun[] | undefined;
    }
  /** Its model could not be reached, or answered nothing readable. */
  | { readonly kind: 'failed'; readonly reason: string }
  /** It was stopped (by the `stop` effect the room asked for). */
  | { readonly kind: 'stopped' }
  /** Its next model call did not fit in a spending limit, so it was not made. */
  | { readonly kind: 'over-limit'; readonly limit: SpendLimitReached };

/** A spending limit a turn reached, as the room tells it. */
export interface SpendLimitReached {
  /** Whose limit: the bridge's, the room's or the agent's own. */
  readonly scope: 'bridge' | 'room' | 'agent';
  /** The agent's name (for `agent`). */
  readonly agent?: string | undefined;
  /** The limit as people read it (`$2.00`) and when it lifts (`2026-11-27 00:00 UTC`). */
  readonly amount: string;
  readonly until: string;
  /** One limit on one day: the room is told once per key (a limit raised and reached again is told again). */
  readonly key: string;
}

/** A batched call's answer for one of its asks. */
export type BatchAnswer =
  | { readonly kind: 'reply'; readonly text: string }
  /** It has nothing to add. */
  | { readonly kind: 'pass' }
  /** It must take a turn of its own (it asked for its tools, its answer could not be used, the call failed). */
  | { readonly kind: 'alone' };

export interface Participant {
  readonly name: string;
  readonly kind: 'agent' | 'human';
}

/** Who posts by an action, and from where. */
export interface Actor {
  readonly agent: string;
  /** The room the acting agent's turn is in. */
  readonly room: string;
  /** The ask of that turn, and what it answers (a request opened by the action nests in it). */
  readonly ask: number;
  readonly requests: readonly number[];
  readonly people: readonly string[];
  readonly audience: readonly string[] | null;
  /** The human whose message started the acting turn's chain (rule 17). */
  readonly root?: { readonly id: string; readonly name: string } | undefined;
  /** The trace of the message that started the acting turn's chain (opaque here). */
  readonly trace?: string | undefined;
}

export type ChatRequestStatus = 'pending' | 'accepted' | 'declined' | 'expired';

/** A private chat request between the two agents of a pair room, as that room decided it (and the store keeps it). */
export interface ChatRequest {
  /** Unique across pairs (the shell gives it): the agents answer by it. */
  readonly id: number;
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly status: ChatRequestStatus;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** The sender was told it expired or was declined. */
  readonly senderTold: boolean;
}

/** Messaging actions agents take during a turn, arriving in the room they act on. */
export type Action =
  /**
   * send_channel_message, send_dm, chat: post `text` here as the agent; `requestReply` awaits these here, as the
   * agent named them (the room reads them: rule 5.1).
   */
  | {
      readonly kind: 'post';
      readonly call: string;
      readonly from: Actor;
      readonly text: string;
      readonly requestReply: readonly string[];
      /** send_channel_message: it posts in rooms only, never in a DM or a private chat. */
      readonly roomsOnly?: boolean | undefined;
      /** `chat` from another room: the pair's private chat starts afresh (count 0, the agents in control). */
      readonly fresh?: boolean | undefined;
    }
  /**
   * chat_request, arriving in the pair's room, which decides it (chats.ts): refused while a request between the two
   * is pending; else the recipient gets a turn here to accept or decline. `id`: a fresh id the shell gives it.
   */
  | {
      readonly kind: 'chat-request';
      readonly call: string;
      readonly id: number;
      readonly from: string;
      readonly to: string;
      readonly reason: string;
      /** The pair's requests the store holds (those kept before the pair room held them are taken in). */
      readonly known?: readonly ChatRequest[] | undefined;
    }
  /** chat_response: `agent` answers request `id` (its reply is shown only if it accepted). */
  | {
      readonly kind: 'chat-response';
      readonly call: string;
      readonly id: number;
      readonly agent: string;
      readonly accept: boolean;
      readonly known?: readonly ChatRequest[] | undefined;
    }
  /** The sender of these requests has been told how they ended (expired or declined): it is told once. */
  | {
      readonly kind: 'chat-told';
      readonly call: string;
      readonly ids: readonly number[];
      readonly known?: readonly ChatRequest[] | undefined;
    };

export type CommandName = 'pass' | 'reset' | 'status' | 'privacy' | 'clear' | 'budget' | 'approve' | 'deny';

export interface Command {
  /** Names the command's answer (effect `answer`). */
  readonly id: string;
  readonly name: CommandName;
  readonly args: string;
  readonly user: string;
  /** The platform user id of who gave it (who may approve: rule 17). */
  readonly userId?: string | undefined;
  readonly isOperator: boolean;
  /** Issued from the operator console, not in the room: what it changes is told in the room (rule 8.6). */
  readonly fromConsole?: boolean | undefined;
  /** The trace the shell opened for it (opaque here). */
  readonly trace?: string | undefined;
}

/** What a request looks like when it settles, as its origin room needs it for the requester's resume. */
export interface SettledRequest {
  readonly id: number;
  readonly requester: string;
  readonly parent: number | null;
  readonly text: string;
  readonly status: 'answered' | 'expired' | 'cancelled';
  readonly awaited: readonly Participant[];
  readonly answers: readonly RequestAnswer[];
  readonly opener: Opener;
}

export interface RequestAnswer {
  readonly participant: string;
  readonly text: string;
  /** answer: it replied; pass: [pass]; failed: it could not answer; stopped: an operator stopped it; late: deadline. */
  readonly outcome: 'answer' | 'pass' | 'failed' | 'stopped' | 'late';
  readonly at: number;
}

/** What one room tells another. */
export type Note =
  /**
   * A request this room's agent opened elsewhere is open there (so a hand-back here can cancel it), nested in
   * `parent` (so cancelling the parent here cancels it too).
   */
  | { readonly kind: 'request-opened'; readonly id: number; readonly target: string; readonly parent?: number | null }
  /** A request this room's agent opened (possibly here) has settled: its requester's resume is due. */
  | { readonly kind: 'request-settled'; readonly request: SettledRequest }
  /** The origin room of these requests handed back or was stopped: they are cancelled, with those nested in them. */
  | { readonly kind: 'cancel-requests'; readonly ids: readonly number[] };

/** A turn cut by a restart had already made these tool calls (the room is told; they are not run again). */
export interface CutTools {
  readonly ask: number;
  readonly runs: ReadonlyArray<{ readonly tool: string; readonly input: string | null; readonly cut: boolean }>;
}

export type RoomEvent = { readonly now: number } & (
  | { readonly type: 'message'; readonly message: Incoming }
  | { readonly type: 'edit'; readonly edit: Edit }
  | { readonly type: 'answer'; readonly ask: number; readonly outcome: TurnOutcome }
  | { readonly type: 'batch'; readonly answers: ReadonlyArray<{ readonly ask: number; readonly answer: BatchAnswer }> }
  | { readonly type: 'posted'; readonly post: number; readonly platformIds: readonly string[] }
  | { readonly type: 'post-failed'; readonly post: number; readonly reason: string }
  | { readonly type: 'action'; readonly action: Action }
  | { readonly type: 'deadline'; readonly request: number }
  /** A private chat request's expiry (a pair room's). */
  | { readonly type: 'chat-expired'; readonly chat: number }
  /** A tool call waits for approval (rule 17), and an approval's deadline. */
  | { readonly type: 'approval'; readonly request: ApprovalRequest }
  | { readonly type: 'approval-expired'; readonly id: string }
  | { readonly type: 'command'; readonly command: Command }
  /** A note from another room (or this one), with its stored id: taking it removes the stored copy (`note-done`). */
  | { readonly type: 'note'; readonly note: Note; readonly id?: string | undefined }
  /** A catch-up of missed messages starts (their asks wait) or is done (the room's queue runs). */
  | { readonly type: 'catch-up'; readonly phase: 'start' | 'done' }
  /** The bridge started again: what was in flight goes on (`cut`: the current turn had run tools). */
  | { readonly type: 'restart'; readonly cut?: CutTools | undefined }
);

export type RoomEventType = RoomEvent['type'];
