import type { AuthorKind, ToolRun } from './events.js';

export type { ToolRun };

/** A message as the router sees it: plain data. */
export interface RoomMessage {
  readonly id: number;
  /** Agent name or human display name, without '@'. */
  readonly author: string;
  readonly authorId: string;
  readonly kind: AuthorKind;
  readonly content: string;
  /**
   * Agent names this message addresses (canonical spelling): its `@mentions` in first-mention order,
   * then agents addressed by platform means (a human's reply to an agent's message).
   */
  readonly mentions: readonly string[];
  /**
   * Who this message asked for a reply — agents and humans: its mentions, less the people it answers
   * (mentioning who asked you, in your answer, is the answer). Absent: the same as `mentions`.
   */
  readonly requests?: readonly string[] | undefined;
  /**
   * Under privacy: the participants who may see this message (author included); absent or null when
   * everyone may. Humans on the platform see the room as it is; this is what agents are shown.
   */
  readonly audience?: readonly string[] | null | undefined;
  readonly toolRuns: readonly ToolRun[];
  /** The bridge's lines about the files uploaded with it (`[file: uploads/a.csv (text/csv, 1.2 KB)]`), if any. */
  readonly files?: readonly string[] | undefined;
  readonly at: number;
  /**
   * What the message costs as an agent's context renders it (tool runs and file lines included), per encoding,
   * without any approximation margin: counted once, when it is first read for a turn, and kept with it. Absent for an
   * encoding not counted yet.
   */
  readonly tokens?: MessageTokens | undefined;
}

/** A message's token counts by encoding name (`o200k_base`, `cl100k_base`). */
export interface MessageTokens {
  readonly o200k_base?: number | undefined;
  readonly cl100k_base?: number | undefined;
}
