/**
 * What the web room's server and page say to each other over the WebSocket (JSON frames), and the shapes of the
 * messages they carry. The page's modules (public/) read the same shapes.
 */
import type { PostButton } from '../../src/ports.js';

/** A tool run as the page shows it: what ran, what it printed, how it ended. */
export interface WireTool {
  readonly tool: string;
  readonly command: string;
  readonly output: string;
  /** `exit 0`, `exit 2`, `timed out`, `done`. */
  readonly status: string;
}

/** A message in a room's transcript. */
export interface WireMessage {
  /** The platform id: the same live and from the history (the page keeps one message per id). */
  readonly id: string;
  readonly author: string;
  /** `system`: the bridge's own lines. */
  readonly role: 'human' | 'agent' | 'system';
  readonly text: string;
  readonly at: number;
  readonly tools: readonly WireTool[];
  /** Files attached, by name (live only: the stored text names them too). */
  readonly files?: readonly string[] | undefined;
  /**
   * An approval card's buttons (live only: the stored text says the commands). A click sends the command frame a
   * typed `/approve A1` is, so the server checks it as any command.
   */
  readonly buttons?: readonly PostButton[] | undefined;
  /** Where older messages start (stored messages only). */
  readonly cursor?: number | undefined;
}

/** Something that happened in a room; numbered (`n`) so a page that reconnects asks for what came after. */
export type FeedEvent =
  | { readonly kind: 'message'; readonly message: WireMessage }
  /** An agent's reply while it is written (the whole text so far); its final message comes with the same id. */
  | { readonly kind: 'stream'; readonly id: string; readonly agent: string; readonly text: string; readonly at: number }
  /** A reply shown while written came to nothing (a pass, a failure, /pass). */
  | { readonly kind: 'unstream'; readonly id: string }
  | ({ readonly kind: 'tool'; readonly id: string; readonly agent: string; readonly at: number } & WireTool);

/** Frames the server sends. */
export type ServerFrame =
  | {
      readonly type: 'welcome';
      /** This run of the bridge: numbers from another run mean nothing here. */
      readonly epoch: string;
      /** The newest event's number. */
      readonly n: number;
      readonly room: string;
      readonly me: { readonly name: string; readonly operator: boolean };
      readonly messages: readonly WireMessage[];
      /** Replies being written now. */
      readonly streams: ReadonlyArray<{
        readonly id: string;
        readonly agent: string;
        readonly text: string;
        readonly at: number;
      }>;
      /** The cursor of the oldest message sent: older ones come from the history; null when there are none. */
      readonly older: number | null;
      /** Milliseconds between the server's beats (a page that hears nothing for much longer reconnects). */
      readonly beat: number;
    }
  /** The page was away briefly: what it missed follows as events; nothing is sent again. */
  | { readonly type: 'resume'; readonly epoch: string; readonly n: number; readonly beat: number }
  | { readonly type: 'event'; readonly n: number; readonly event: FeedEvent }
  | { readonly type: 'typing'; readonly agent: string }
  /** The post with this id is stored (the page stops offering to send it again). */
  | { readonly type: 'ack'; readonly id: string }
  /** The post with this id was not taken (too fast, too long, no such file): why. */
  | { readonly type: 'refused'; readonly id: string; readonly reason: string }
  /** A line for this person only: a command's answer. */
  | { readonly type: 'notice'; readonly text: string }
  /** Sent every little while: a page that hears nothing for longer knows its connection is gone. */
  | { readonly type: 'beat' }
  /** The session ended (signed out, revoked, expired): the connection closes and must not be retried. */
  | { readonly type: 'bye'; readonly reason: string };

/** Frames the page sends. */
export interface PostFrame {
  readonly type: 'post';
  /** The page's own id for the post (resent after a reconnect until acknowledged; taken once). */
  readonly id: string;
  readonly text: string;
  /** Files uploaded first (`POST /api/rooms/<room>/files`), by the ids the server gave. */
  readonly files?: readonly string[] | undefined;
}

/** The WebSocket close code for an ended session: the page does not reconnect. */
export const CLOSE_SIGNED_OUT = 4001;
