/** The public shapes of the fake Slack workspace. */

export interface FakeApp {
  /** The agent-facing name (also the bot user's name). */
  readonly name: string;
  readonly appId: string;
  /** The bot user (`<@U…>` mentions it). */
  readonly botUserId: string;
  /** The bot id (`B…`) stamped on messages the app posts. */
  readonly botId: string;
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  /** Set for HTTP-mode apps: events are signed and POSTed here instead of sent over Socket Mode. */
  requestUrl: string | undefined;
}

export interface FakeHuman {
  readonly id: string;
  readonly name: string;
  readonly displayName: string;
}

export type ChannelType = 'channel' | 'group' | 'im' | 'mpim';

export interface FakeChannel {
  readonly id: string;
  readonly name: string;
  readonly type: ChannelType;
  /** User ids (humans and bot users). */
  readonly members: Set<string>;
}

/** A message as the workspace stores it. */
export interface FakeMessage {
  channel: string;
  ts: string;
  text: string;
  user: string;
  threadTs: string | undefined;
  /** Set when an app posted it. */
  botId: string | undefined;
  appId: string | undefined;
  /** How it entered: a human typing, or a Web API method called by an app. */
  via: 'human' | 'chat.postMessage' | 'chat.update';
  edited: boolean;
  /** When it was last edited (the `edited.ts` Slack reports). */
  editedTs?: string;
  /** `file_share` for a message that shares files. */
  subtype?: string;
  /** Files shared with the message, as Slack describes them (`url_private_download` on the fake's host). */
  files?: Record<string, unknown>[];
  /** Legacy attachments as Slack sends them (a shared message rides in one with `is_share`). */
  attachments?: Record<string, unknown>[];
  /** Block Kit blocks an app posted with the message (`text` is then the notification's fallback). */
  blocks?: Record<string, unknown>[];
}

/** One envelope the fake sent to an app (over Socket Mode or HTTP). */
export interface Delivery {
  readonly app: string;
  readonly envelopeId: string;
  readonly type: 'events_api' | 'slash_commands' | 'interactive';
  readonly envelope: Record<string, unknown>;
  readonly sentAt: number;
  /** The Socket Mode connection it went to (numbered from 1 in the order they opened); unset while kept, or over HTTP. */
  connection?: number | undefined;
}

export interface Ack {
  readonly app: string;
  readonly envelopeId: string;
  readonly payload: Record<string, unknown> | undefined;
  readonly at: number;
}

/** One Web API call the fake served (successful or not). */
export interface ApiCall {
  readonly method: string;
  /** The app whose token made the call, when known. */
  readonly app: string | undefined;
  readonly args: Record<string, unknown>;
  readonly contentType: string;
  readonly status: number;
  /** performance.now() when the fake handled it. */
  readonly at: number;
}

/** A planned failure for the next call of a method. */
export type Fault =
  | { readonly kind: 'rate-limit'; readonly retryAfterS: number }
  | { readonly kind: 'error'; readonly error: string }
  /** Answer with an HTTP error status (a 5xx outage) without performing the call. */
  | { readonly kind: 'http'; readonly status: number }
  /** Perform the call, then drop the connection before answering (the caller cannot know it succeeded). */
  | { readonly kind: 'drop-after' };

/** A file a human uploaded, with its bytes (served at its `url_private_download`). */
export interface FakeFile {
  readonly id: string;
  readonly name: string;
  readonly mimetype: string;
  readonly content: Buffer;
  readonly channel: string;
}

/** One request for a file's bytes: which app's token came with it, and what the fake answered. */
export interface FileDownload {
  readonly fileId: string;
  readonly app: string | undefined;
  readonly status: number;
  readonly served: 'file' | 'sign-in page' | 'none';
}

export interface SlashResponse {
  readonly app: string;
  readonly body: Record<string, unknown>;
}
