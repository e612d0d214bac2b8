import type { AuthorKind } from '../ports.js';

/** One tool call an agent made while writing a message. */
export interface ToolRun {
  readonly tool: string;
  /** What was run: the shell command for bash, the arguments as JSON otherwise. */
  readonly input: string;
  readonly output: string;
}

/** A message as the router sees it: plain data. */
export interface RoomMessage {
  readonly id: number;
  /** Agent name or human display name, without '@'. */
  readonly author: string;
  readonly authorId: string;
  readonly kind: AuthorKind;
  readonly content: string;
  /** Agent names this message mentions (canonical spelling, first-mention order). */
  readonly mentions: readonly string[];
  /**
   * The agents this message asked for a reply: its mentions, less the requester and co-participants
   * of the request its author was answering. Absent: the same as `mentions`.
   */
  readonly requests?: readonly string[] | undefined;
  readonly toolRuns: readonly ToolRun[];
  readonly at: number;
}

/** What the router needs to know about an agent. */
export interface AgentProfile {
  readonly name: string;
  readonly activation: 'always' | 'mention';
}

/** The per-room state that survives a restart. */
export interface TurnState {
  /** Agent messages since the last human or system message. */
  readonly consecutive: number;
  /** `humans` after a hand-back or /pass: agent messages wake no one until a human speaks. */
  readonly control: 'agents' | 'humans';
  readonly reason?: string | undefined;
}
