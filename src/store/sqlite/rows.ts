/** How messages and requests are kept in SQLite rows (JSON in TEXT columns), both ways. */
import type { DecisionRecord, RequestRow, Write } from '../../room/effects.js';
import type { Participant, RequestAnswer, ToolRun } from '../../room/events.js';
import type { MessageTokens, RoomMessage } from '../../room/types.js';
import type { DecisionRow, TranscriptRow } from '../port.js';
import type { MessageWrite } from '../stored-message.js';

export interface MessageDb {
  id: number;
  author: string;
  author_id: string;
  kind: RoomMessage['kind'];
  content: string;
  mentions: string;
  requests: string | null;
  audience: string | null;
  tool_runs: string | null;
  files: string | null;
  created_at: number;
  tokens_o200k: number | null;
  tokens_cl100k: number | null;
}

/** The columns `toMessage` reads. */
export const MESSAGE_COLUMNS =
  'id, author, author_id, kind, content, mentions, requests, audience, tool_runs, files, created_at, tokens_o200k, ' +
  'tokens_cl100k';

/** The counts a row keeps (none: not counted yet in any encoding). */
function tokensOf(row: MessageDb): MessageTokens | undefined {
  if (row.tokens_o200k === null && row.tokens_cl100k === null) return undefined;
  return {
    ...(row.tokens_o200k !== null ? { o200k_base: row.tokens_o200k } : {}),
    ...(row.tokens_cl100k !== null ? { cl100k_base: row.tokens_cl100k } : {}),
  };
}

export function toMessage(row: MessageDb): RoomMessage {
  return {
    id: row.id,
    author: row.author,
    authorId: row.author_id,
    kind: row.kind,
    content: row.content,
    mentions: JSON.parse(row.mentions) as string[],
    ...(row.requests !== null ? { requests: JSON.parse(row.requests) as string[] } : {}),
    ...(row.audience !== null ? { audience: JSON.parse(row.audience) as string[] } : {}),
    toolRuns: row.tool_runs ? (JSON.parse(row.tool_runs) as ToolRun[]) : [],
    ...(row.files !== null ? { files: JSON.parse(row.files) as string[] } : {}),
    at: row.created_at,
    ...withTokens(tokensOf(row)),
  };
}

const withTokens = (tokens: MessageTokens | undefined) => (tokens ? { tokens } : {});

/** Counts kept for stored messages, by row id. */
export interface TokenRow {
  readonly id: number;
  readonly tokens: MessageTokens;
}

/** Keeps counts on a message's row; an encoding not given keeps what it had. */
export const SET_TOKENS = `UPDATE messages SET tokens_o200k = coalesce(?, tokens_o200k),
    tokens_cl100k = coalesce(?, tokens_cl100k) WHERE id = ?`;

/** The INSERT's values after the room and the first platform id, in the order of `INSERT_MESSAGE`'s columns. */
export function messageValues(message: MessageWrite): Array<string | number | null> {
  const runs = message.toolRuns;
  return [
    message.seq,
    message.post ?? null,
    message.author,
    message.authorId,
    message.kind,
    message.text,
    JSON.stringify(message.mentions),
    JSON.stringify(message.requests),
    message.audience === null ? null : JSON.stringify(message.audience),
    runs && runs.length > 0 ? JSON.stringify(runs) : null,
    message.files && message.files.length > 0 ? JSON.stringify(message.files) : null,
    message.at,
  ];
}

/**
 * Stores a message unless one of its platform ids is known: as a message's own id (the unique key) or in
 * message_refs (a further chunk's id, or the id of a message /clear forgot).
 */
export const INSERT_MESSAGE = `INSERT INTO messages (channel_id, platform_message_id, seq, post, author, author_id, kind,
    content, mentions, requests, audience, tool_runs, files, created_at, routed, routed_at)
  SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
  WHERE NOT EXISTS (SELECT 1 FROM message_refs WHERE channel_id = ? AND platform_message_id = ?)
  ON CONFLICT (channel_id, platform_message_id) DO NOTHING`;

export interface RequestDb {
  id: number;
  requester: string;
  origin: string;
  target: string;
  parent: number | null;
  text: string;
  awaited: string;
  answers: string;
  status: RequestRow['status'];
  opened_at: number;
  deadline: number;
  opener: string;
}

export const toRequest = (row: RequestDb): RequestRow => ({
  id: row.id,
  requester: row.requester,
  origin: row.origin,
  target: row.target,
  parent: row.parent,
  text: row.text,
  awaited: JSON.parse(row.awaited) as Participant[],
  answers: JSON.parse(row.answers) as RequestAnswer[],
  status: row.status,
  openedAt: row.opened_at,
  deadline: row.deadline,
  opener: JSON.parse(row.opener) as RequestRow['opener'],
});

export const requestValues = (request: RequestRow): Array<string | number | null> => [
  request.id,
  request.requester,
  request.origin,
  request.target,
  request.parent,
  request.text,
  JSON.stringify(request.awaited),
  JSON.stringify(request.answers),
  request.status,
  request.openedAt,
  request.deadline,
  JSON.stringify(request.opener),
];

export const UPSERT_REQUEST = `INSERT INTO requests (id, requester, origin, target, parent, text, awaited, answers, status,
    opened_at, deadline, opener) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET requester = excluded.requester, origin = excluded.origin, target = excluded.target,
    parent = excluded.parent, text = excluded.text, awaited = excluded.awaited, answers = excluded.answers,
    status = excluded.status, opened_at = excluded.opened_at, deadline = excluded.deadline, opener = excluded.opener`;

export interface TranscriptDb {
  id: number;
  platform_message_id: string | null;
  seq: number | null;
  author: string;
  kind: TranscriptRow['kind'];
  content: string;
  tool_runs: string | null;
  created_at: number;
}

/** The columns `toTranscript` reads. */
export const TRANSCRIPT_COLUMNS = 'id, platform_message_id, seq, author, kind, content, tool_runs, created_at';

export const toTranscript = (row: TranscriptDb): TranscriptRow => ({
  id: row.id,
  platformId: row.platform_message_id,
  seq: row.seq,
  author: row.author,
  kind: row.kind,
  text: row.content,
  toolRuns: row.tool_runs ? (JSON.parse(row.tool_runs) as ToolRun[]) : [],
  at: row.created_at,
});

export const toDecision = (row: { seq: number; record: string; at: number }): DecisionRow => ({
  seq: row.seq,
  record: JSON.parse(row.record) as DecisionRecord,
  at: row.at,
});

/** A message written with the record of its routing (one statement for the most common decision). */
export type RoutedMessage = Extract<Write, { type: 'message' }> & {
  readonly routed: Extract<Write, { type: 'decision' }>;
};

/**
 * A decision's record of how its message was routed goes on the message's own row: the decision of a message and
 * its routing stays one statement, as fast as a bare INSERT, instead of a transaction of two.
 */
export function fold(writes: readonly Write[]): ReadonlyArray<Write | RoutedMessage> {
  const messages = writes.filter((w) => w.type === 'message');
  if (messages.length !== 1) return writes;
  const message = messages[0] as Extract<Write, { type: 'message' }>;
  const routed = writes.find(
    (w): w is Extract<Write, { type: 'decision' }> =>
      w.type === 'decision' && w.record.kind === 'routed' && w.seq === message.message.seq,
  );
  if (!routed) return writes;
  return writes.flatMap((w) => (w === routed ? [] : w === message ? [{ ...message, routed }] : [w]));
}
