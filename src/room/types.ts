import type { AuthorKind } from '../ports.js';

import type { ToolRun } from './events.js';

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
  readonly at: number;
}

/** What an agent's turn answers; carried from the turn to the message it posts (never inferred). */
export interface ReplyTo {
  /** request_reply threads this turn was asked in. */
  readonly threads: readonly number[];
  /** Whose message it answers directly (a human who addressed it, a requester): naming them is an answer. */
  readonly people: readonly string[];
  /** The audience of the exchange it answers, under privacy; null when public. */
  readonly audience: readonly string[] | null;
}

export const NOT_A_REPLY: ReplyTo = { threads: [], people: [], audience: null };

/** What the router needs to know about an agent. */
export interface AgentProfile {
  readonly name: string;
  readonly activation: 'always' | 'mention';
}

/** The per-room state that survives a restart. */
export interface TurnState {
  /** Agent messages since the last human message, hand-back or operator command. */
  readonly consecutive: number;
  /** `humans` after a hand-back or /pass: agent messages wake no one until a human speaks. */
  readonly control: 'agents' | 'humans';
  readonly reason?: string | undefined;
}
