/**
 * What the bridge shows an operator console and a web transcript: plain data, read from the rooms and the store.
 * Types only (the bridge builds them, the web adapter shows them).
 */
import type { DecisionRecord } from './room/effects.js';

/** A stored message of a room as a transcript shows it. */
export interface TranscriptEntry {
  /** The page cursor: older messages are asked for `before` it. */
  readonly cursor: number;
  /** The platform's id of the message (`row-<cursor>` when it has none). */
  readonly id: string;
  readonly seq: number | null;
  readonly author: string;
  readonly kind: 'human' | 'agent' | 'system';
  readonly text: string;
  readonly toolRuns: ReadonlyArray<{ readonly tool: string; readonly input: string; readonly output: string }>;
  readonly at: number;
}

/** One reason the room gave itself, about the message with seq `seq`. */
export interface WhyEntry {
  readonly seq: number;
  readonly record: DecisionRecord;
  readonly at: number;
}

/** A room as an operator sees it now. */
export interface RoomOverview {
  /** `platform:channel`. */
  readonly key: string;
  readonly platform: string;
  readonly channel: string;
  /** The agent whose private room (DM) it is. */
  readonly direct: string | null;
  readonly kind: 'room' | 'direct' | 'pair';
  /** Who holds control, the consecutive agent messages against the limit, and why the humans have it. */
  readonly control: {
    readonly holder: 'agents' | 'humans';
    readonly count: number;
    readonly limit: number;
    readonly reason?: string | undefined;
  };
  readonly privacy: 'off' | 'mentions';
  /** The agents writing a turn now, and those asked and waiting. */
  readonly working: readonly string[];
  readonly queued: readonly string[];
  /** The newest message's seq. */
  readonly seq: number;
  /** The sandbox's state, one line (undefined when it cannot tell). */
  readonly sandbox?: string | undefined;
  /** Approval cards of the room (rule 17): waiting, approved and not yet run, or denied while their turn was parked. */
  readonly approvals?: ReadonlyArray<{
    readonly id: string;
    readonly agent: string;
    readonly tool: string;
    readonly status: 'waiting' | 'approved' | 'denied';
    /** Who may answer besides operators; absent: operators only. */
    readonly root?: string | undefined;
  }>;
  /** The room's MCP servers, a line each (`run: host` flagged): the agent, the server, where it runs, its state. */
  readonly mcp?: readonly string[] | undefined;
}

/** A request still waiting for answers (or for its requester to resume), with the requests made within it. */
export interface RequestNode {
  readonly id: number;
  readonly requester: string;
  /** Room keys: where it was asked, and where the requester resumes. */
  readonly target: string;
  readonly origin: string;
  readonly text: string;
  readonly status: 'open' | 'answered' | 'expired';
  readonly awaited: ReadonlyArray<{
    readonly name: string;
    readonly kind: 'agent' | 'human';
    readonly outcome?: string;
  }>;
  readonly openedAt: number;
  readonly deadline: number;
  readonly children: readonly RequestNode[];
}

/** One agent's usage and estimated cost, all rooms together. */
export interface AgentUsageView {
  readonly agent: string;
  readonly model: string;
  readonly activation: 'always' | 'mention';
  readonly calls: number;
  readonly input: number;
  readonly cached: number;
  readonly output: number;
  /** US dollars at the agent's `price` (undefined: no price configured). */
  readonly cost?: number | undefined;
  /** Today's spend against the agent's daily limit, in US dollars (undefined: no price, so nothing is counted). */
  readonly spend?: SpendView | undefined;
}

/** A day's spend in one scope against its limit, in US dollars. */
export interface SpendView {
  readonly spent: number;
  /** Held by calls under way. */
  readonly held: number;
  /** null: no limit. */
  readonly limit: number | null;
}

export interface BridgeOverview {
  /** When it was read (ms since the epoch). */
  readonly at: number;
  readonly rooms: readonly RoomOverview[];
  /** Open requests as trees: a request made while answering another is its child. */
  readonly requests: readonly RequestNode[];
  readonly agents: readonly AgentUsageView[];
  /** Today's spend of the whole bridge against SPEND_LIMIT_USD_DAY (or an operator's /budget). */
  readonly spend?: SpendView | undefined;
  /** The access policy in force on Discord and Slack, as /access says it (docs/trust.md). */
  readonly access?: string | undefined;
}
