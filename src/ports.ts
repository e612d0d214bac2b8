/**
 * The interfaces the edges implement. Arrows point inward: adapters/ and sandbox/
 * import these types; nothing in src/ imports a platform SDK or dockerode.
 */
import type { BridgeOverview, TranscriptEntry, WhyEntry } from './overview.js';
import type { AuthorKind } from './room/events.js';

/** Who wrote a message, as the router sees it (the room's own type: src/room imports nothing outside it). */
export type { AuthorKind };

/** A platform event, normalised by an adapter before the core sees it. */
export interface Inbound {
  /** Platform name: `console`, `discord`, `slack`, `web`. */
  readonly platform: string;
  /** The W3C traceparent of the message's trace, set by the bridge when tracing is on (adapters leave it unset). */
  readonly trace?: string | undefined;
  /**
   * The room inside the platform: a channel id, a DM channel id, or a Slack
   * `channel/thread_ts`. Together with `platform` it names one conversation.
   */
  readonly channel: string;
  /** The platform's id for this message; the store's unique key deduplicates on it. */
  readonly messageId: string;
  readonly author: {
    /** Platform user id (a human's id, or the agent bot's user id). */
    readonly id: string;
    /** For humans: the display name shown as `@name`. For agents: the agent's configured name. */
    readonly name: string;
    readonly kind: AuthorKind;
    /** A human's roles or user groups where the platform says (Discord role ids): the access policy reads them. */
    readonly roles?: readonly string[];
  };
  /** The channel's name without `#`, where the adapter knows it (ACCESS_CHANNELS may name channels so). */
  readonly channelName?: string;
  /** Text with platform mentions already turned into `@name`. */
  readonly text: string;
  /** Set when the room is a private conversation with one agent (a DM to that agent's bot). */
  readonly direct?: { readonly agent: string };
  /** Milliseconds since the epoch; defaults to the bridge's clock. */
  readonly at?: number;
  /**
   * Agents this message addresses beyond the `@name` mentions in its text: a human's platform reply
   * to an agent's message. Canonical agent names.
   */
  readonly addressed?: readonly string[];
  /** Files attached to the message (Slack file shares, Discord attachments). */
  readonly files?: readonly InboundFile[];
  /**
   * Set when a catch-up fetched this message (it was posted while nobody listened): it is stored, and the
   * room is answered once its catch-up is done (`AdapterSink.caughtUp`) — its newest state, once.
   */
  readonly missed?: boolean;
  /**
   * Set when this event is an edit of an earlier message: the edited message's platform id and when it
   * was first posted. `messageId` is then an id of its own for this edit (so the dedupe key differs).
   */
  readonly edit?: { readonly of: string; readonly originalAt: number };
}

/** A file attached to an incoming message. */
export interface InboundFile {
  /** The file name as the platform gives it (not yet sanitised). */
  readonly name: string;
  readonly mimeType?: string | undefined;
  /** Size in bytes, as the platform reports it. */
  readonly size: number;
  /**
   * Fetches the content, with the platform's credentials and from the platform's own file host only.
   * Rejects when the file cannot be fetched.
   */
  download(signal?: AbortSignal): Promise<Uint8Array>;
}

/** Operator commands; `clear` is the terminal room's own (forget this room's history). */
export const COMMAND_NAMES = [
  'pass',
  'reset',
  'status',
  'privacy',
  'clear',
  'budget',
  'access',
  'pair',
  'approve',
  'deny',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];
/** The commands of every platform's rooms (`clear` is the terminal room's own). */
export const ROOM_COMMANDS: readonly CommandName[] = COMMAND_NAMES.filter((name) => name !== 'clear');

/**
 * A command (`/pass`, `/reset`, `/status`, `/approve A1`, …) issued in a room: typed, or a click on a card's button
 * (`PostButton`), which is the same command by the person who clicked.
 */
export interface CommandEvent {
  readonly platform: string;
  /** The W3C traceparent of the command's trace, set by the bridge when tracing is on (adapters leave it unset). */
  readonly trace?: string | undefined;
  readonly channel: string;
  readonly name: CommandName;
  /** Whatever followed the command name, trimmed (e.g. an agent name). */
  readonly args: string;
  readonly user: { readonly id: string; readonly name: string };
  /** Adapters decide this from OPERATORS and platform permissions. */
  readonly isOperator: boolean;
  /** Set when the command is issued in an agent's DM room. */
  readonly direct?: { readonly agent: string };
  /**
   * Set when the command is issued from the operator console rather than typed in the room: the humans in the room
   * did not see it, so a change of control is told to them in a line.
   */
  readonly fromConsole?: boolean;
  /**
   * The platform's id of this command (a Discord interaction's id, a Slack command's or click's trigger_id), where
   * several bridges sharing a store may receive it: it is carried out once, and answered by the bridge that claimed it.
   */
  readonly id?: string;
  /**
   * The adapter's route to answer this command from any bridge (`answerCommand`), for one that carries out a command
   * another bridge claimed and can no longer answer: a secret (an interaction's token, a response_url), never logged.
   */
  readonly reply?: string;
}

/**
 * A button a post carries: an answer to an approval card (rule 17). A click is the command `/<action> <card>` by the
 * person who clicked, in the room of the message clicked; the room decides whether that person may give it.
 */
export interface PostButton {
  readonly action: 'approve' | 'deny';
  /** The card's id in its room, such as `A1`. */
  readonly card: string;
}

/** A message the bridge asks an adapter to post. */
export interface Outbound {
  readonly channel: string;
  /** The agent whose identity posts it; `null` for the bridge's own (system) messages. */
  readonly agent: string | null;
  /** Text with `@name` mentions; the adapter turns them into platform mentions. */
  readonly text: string;
  /**
   * Buttons under the message (an approval card's answers), where the platform has them; an adapter without ignores
   * them (the text says the command to type).
   */
  readonly buttons?: readonly PostButton[] | undefined;
}

/** How a post is sent. */
export interface PostOptions {
  readonly signal?: AbortSignal;
  /**
   * The outbox entry's idempotency key (letters, digits and dots, at most 20 characters): posts with the
   * same key are one post where the platform can tell (Discord: the nonce, with enforce_nonce).
   */
  readonly key?: string;
  /**
   * Set when the post may have reached the platform before a restart (milliseconds since the epoch when it
   * was first tried): the adapter looks for it among the room's recent messages before posting again.
   */
  readonly resendSince?: number;
}

export interface Posted {
  /** Platform ids of every message the post produced (a long reply may be several chunks). */
  readonly messageIds: readonly string[];
}

/**
 * What became of a platform message the bridge received. `kept`: stored, found a duplicate, kept for the bridge that
 * serves its room, or nothing to keep (an echo of the bridge's own line); `held`: in memory while the store cannot
 * write, stored once it can (unless the bridge stops first); `lost`: not kept in this run (the bridge was stopping,
 * too much waits for the store already, its room could not be opened).
 */
export type Receipt = 'kept' | 'held' | 'lost';

/** What the bridge offers an adapter. */
export interface AdapterSink {
  /**
   * A platform message arrived. Resolves once it is stored (or found to be a duplicate), or held in memory while the
   * store cannot write, with what became of it (a platform that redelivers what is not acknowledged acknowledges
   * only `kept`; no receipt reads as `kept`).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a sink that reports no receipt (a test's recorder) resolves with void
  receive(event: Inbound): Promise<Receipt | void>;
  /**
   * An operator command arrived; resolves with the text to answer (ephemeral where the platform can), or undefined
   * when another bridge sharing the store claimed the same command (by its `id`): that one answers it.
   */
  command(event: CommandEvent): Promise<string | undefined>;
  /**
   * Where a room's catch-up starts: the platform id up to which nothing is missing (what the adapter last
   * reported through `caughtUp`), else the newest id stored before this start — never one stored since.
   */
  lastMessageId(platform: string, channel: string): string | undefined;
  /**
   * The room has everything up to this platform id: its catch-up is done (where the next one starts). The
   * messages it fetched (`missed`) are then answered as one conversation.
   */
  caughtUp?(platform: string, channel: string, platformId: string): void;
  /**
   * A room in sync has every live message up to this platform id (where the next catch-up starts): stored once the
   * room has taken what arrived before it, with no decision (nothing in the room changes). Without it, `caughtUp`.
   */
  forwarded?(platform: string, channel: string, platformId: string): void;
  /** Resolves when the room has nothing queued or running (the terminal room waits on it between piped lines). */
  settled?(platform: string, channel: string): Promise<void>;
  /** The agents whose turns run in a room now (the terminal room's `/quit` says whom it waits for). */
  working?(platform: string, channel: string): readonly string[];
  /** The stored private rooms (DMs) of a platform and whose they are, so an adapter can catch up on them after a restart. */
  directRooms?(platform: string): Array<{ channel: string; agent: string }>;
  /**
   * Every room the store knows on a platform, most recently active first (an adapter catches up on them); rooms
   * first stored in this run come last, marked `new` (their first message says nothing of what came before it).
   */
  rooms?(platform: string): Array<{ channel: string; agent?: string; new?: boolean }>;
  /**
   * A page of a room's stored messages (`platform:channel`), oldest first: the newest `limit` before the cursor
   * `before`, or the newest. A room the store does not know has none. (The web room's history.)
   */
  transcript?(room: string, page: { before?: number | undefined; limit: number }): Promise<TranscriptEntry[]>;
  /** Every room of every platform as it is now, the open requests, usage and the sandboxes (operator console). */
  overview?(): Promise<BridgeOverview>;
  /** Why: the reasons a room recorded about its messages with seq `from` to `to` (operator console). */
  decisions?(room: string, from: number, to: number): Promise<WhyEntry[]>;
}

/** One chat platform. Each agent identity on it is managed by the adapter. */
export interface ChatAdapter {
  readonly platform: string;
  start(sink: AdapterSink): Promise<void>;
  stop(): Promise<void>;
  post(message: Outbound, options?: PostOptions): Promise<Posted>;
  /**
   * Fetches and forwards what the rooms received while nobody listened. The bridge calls it once after
   * start, when the posts a restart left unsent are out (so they come before what was missed).
   */
  catchUpRooms?(): Promise<void>;
  /**
   * Starts a reply that is shown while it is written (streaming by edits), when the platform and its
   * settings allow; undefined otherwise, and the reply is posted whole.
   */
  stream?(channel: string, agent: string): StreamingPost | undefined;
  /**
   * Shows one person a line no one else sees (Slack's ephemeral message, the web room's own line); resolves false when
   * it could not, and the bridge posts it in the room instead.
   */
  tell?(channel: string, userId: string, text: string): Promise<boolean>;
  /**
   * An answered approval card (rule 17): its message (`messageId`, posted by the bridge's own identity) now reads
   * `text`, without its buttons.
   */
  closeCard?(channel: string, messageId: string, text: string): Promise<void>;
  /** Shows that an agent is working (typing indicator); best effort. */
  typing?(channel: string, agent: string): Promise<void>;
  /** Shows a tool run (the terminal room prints it; `tool`: the tool's name, `bash` for a command); best effort. */
  toolRun?(channel: string, agent: string, command: string, output: string, tool?: string): void;
  /**
   * Opens (or finds) the private room between an agent's identity and a human, by the human's
   * display name as the core knows it; undefined when the platform cannot reach them.
   */
  openDirect?(agent: string, user: string): Promise<string | undefined>;
  /**
   * Whether a person could post in a channel themselves (its member, allowed to write there): an agent acting for
   * them may post there without an operator's approval. Undefined when the platform cannot tell.
   */
  mayPost?(channel: string, userId: string): Promise<boolean | undefined>;
  /**
   * Whether a person could write to another (by display name) themselves: they share a room (`room` first: where the
   * request was made; on Discord a server). Undefined when the platform cannot tell or does not know the name.
   */
  mayDirect?(userId: string, to: string, room: string): Promise<boolean | undefined>;
  /** Resolves a channel reference an agent wrote (`#general`, a name, an id) to a room id. */
  resolveChannel?(reference: string): Promise<string | undefined>;
  /** Whether every identity is connected to the platform now (`/healthz`); absent means always. */
  connected?(): boolean;
  /** Answers an operator's command through the route it gave with it (`CommandEvent.reply`), from any bridge. */
  answerCommand?(reply: string, text: string): Promise<void>;
  /**
   * Whether a room of this platform may be served by this process (the terminal room: only its own channel, never
   * another replica's, even one left with work); absent means every room.
   */
  ownsChannel?(channel: string): boolean;
}

export interface ExecResult {
  /** stdout and stderr, interleaved, truncated by the sandbox's rule. */
  readonly output: string;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
}

/** What is at a path of a workspace (a symlink is `other` unless it is followed). */
export type WorkspaceEntryKind = 'file' | 'directory' | 'other';

/**
 * A channel's workspace files, wherever they are kept: a host folder, or a Docker volume reached through the
 * engine. Paths are relative POSIX paths without `..` (`''` is the workspace itself); a symlink is followed only
 * while it stays inside the workspace. A refusal rejects with a message fit for the model (no host path in it).
 */
export interface WorkspaceFiles {
  /** The first `limit` bytes of a regular file, and its whole size. */
  read(rel: string, limit: number): Promise<{ bytes: Uint8Array; size: number }>;
  /** Writes a whole regular file (replacing one), making its parent folders, owned by the sandbox's user. */
  write(rel: string, content: Uint8Array): Promise<void>;
  /** What is there; undefined when nothing is. */
  kind(rel: string): Promise<WorkspaceEntryKind | undefined>;
  /** A folder's entries (symlinks are not folders: they are listed, never entered); [] when there is none. */
  list(rel: string): Promise<Array<{ readonly name: string; readonly directory: boolean }>>;
}

/** Where the agents' shell commands run: one isolated environment per channel key. */
export interface Sandbox {
  exec(channelKey: string, command: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ExecResult>;
  /** One line for `/status` about this channel's environment. */
  describe?(channelKey: string): Promise<string>;
  /** Removes the channel's environment; with `wipeWorkspace`, its files too. */
  reset?(channelKey: string, options?: { wipeWorkspace?: boolean }): Promise<void>;
  /** The host folder mounted as the channel's workspace (file tools use it), when it is one. */
  workspaceDir?(channelKey: string): string;
  /**
   * The channel's workspace files, created (seeded from the template) when missing: how the file tools and
   * uploads reach a workspace that is not a host folder (a Docker volume). Absent: they use `workspaceDir`.
   */
  workspaceFiles?(channelKey: string): Promise<WorkspaceFiles>;
  /**
   * Rejects (SandboxError, saying why) when writing `bytes` more, in `files` files, would overfill the
   * workspace (SANDBOX_DISK, SANDBOX_FILES).
   */
  checkDisk?(channelKey: string, bytes: number, files?: number): Promise<void>;
  /**
   * Creates the channel's workspace folder when it does not exist yet (seeded from the template, as the first
   * container would), without starting anything; resolves with its host path. Uploads use it.
   */
  ensureWorkspace?(channelKey: string): Promise<string>;
  /**
   * Asks, now, whether commands can run as configured (at start-up, before any agent needs it);
   * resolves with one line per problem, each naming the setting to change. Bounded in time.
   */
  check?(): Promise<readonly string[]>;
  /**
   * The identity of the engine that runs the containers (Docker's engine ID, from `docker info`), so bridges sharing
   * a store can tell whether they share an engine; undefined when the engine does not answer. Bounded in time.
   */
  engine?(): Promise<string | undefined>;
  close(): Promise<void>;
  spawn?(channelKey: string, spec: ProcessSpec): Promise<SandboxProcess>;
}

/** A long-lived process in the channel's environment with its stdin/stdout as byte streams (an MCP stdio server). */
export interface SandboxProcess {
  /** Writes to the process's stdin. */
  write(chunk: string | Uint8Array): void;
  /** Each chunk of the process's stdout, in order. stderr is NOT mixed in (it goes to onStderr). */
  onStdout(listener: (chunk: Uint8Array) => void): void;
  onStderr(listener: (chunk: Uint8Array) => void): void;
  /** Once, when the process has ended (code null when killed or the container went away). */
  onExit(listener: (code: number | null) => void): void;
  /** Ends the process (SIGTERM, then SIGKILL after a grace period); resolves when it is gone. */
  kill(): Promise<void>;
}
export interface ProcessSpec {
  readonly command: string;
  readonly args: readonly string[];
  /** Extra environment, already resolved (secrets read from the bridge's environment by the caller). */
  readonly env: Readonly<Record<string, string>>;
  /** Working directory; default /workspace. */
  readonly cwd?: string;
}

/** A reply shown while the agent writes it. The adapter throttles edits (e.g. at most one a second). */
export interface StreamingPost {
  /** The whole text written so far (replaces what is shown). */
  update(text: string): void;
  /** The final text, with `@name` mentions: shown in full (more messages if long); returns every platform id. */
  finish(text: string): Promise<Posted>;
  /** The reply came to nothing (a pass, an error, /pass): removes whatever was shown. */
  cancel(): Promise<void>;
}
