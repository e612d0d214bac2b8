/** The statements of the Postgres rooms store (rooms.ts): rooms, their messages, decisions, requests and notes. */
import { MESSAGE_COLUMNS, TRANSCRIPT_COLUMNS } from '../sqlite/rows.js';
import { statement } from './pool.js';

/** A room's row with what its messages tell its state; seq grows with the row id within a room (messages_by_channel). */
const ROOM = `SELECT c.id, c.platform, c.channel, c.direct_agent, c.state,
    (SELECT m.seq FROM messages m WHERE m.channel_id = c.id AND m.seq IS NOT NULL ORDER BY m.id DESC LIMIT 1)
      AS newest_seq,
    (SELECT m.seq FROM messages m WHERE m.channel_id = c.id AND m.seq IS NOT NULL AND m.kind = 'human'
      ORDER BY m.id DESC LIMIT 1) AS newest_human
  FROM channels c`;

export const ROOM_SQL = {
  room: statement('room', `${ROOM} WHERE c.platform = $1 AND c.channel = $2`),
  rooms: statement('rooms', `${ROOM} ORDER BY c.id`),
  insertRoom: statement(
    'insert-room',
    'INSERT INTO channels (platform, channel, direct_agent, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
  ),
  // Stored unless one of its platform ids is known: as a message's own id (the unique key) or in message_refs (a
  // further chunk's id, or the id of a message /clear forgot).
  insertMessage: statement(
    'insert-message',
    `INSERT INTO messages (channel_id, platform_message_id, seq, post, author, author_id, kind, content, mentions,
       requests, audience, tool_runs, files, created_at, routed, routed_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16
     WHERE NOT EXISTS (SELECT 1 FROM message_refs WHERE channel_id = $1 AND platform_message_id = $2)
     ON CONFLICT (channel_id, platform_message_id) DO NOTHING
     RETURNING id`,
  ),
  // The same under a lease: stored only while `$17` is the room's live fencing token (the share lock holds off a
  // change of hands until this statement's transaction ends). Nothing returned: a duplicate or a stale token.
  insertMessageFenced: statement(
    'insert-message-fenced',
    `INSERT INTO messages (channel_id, platform_message_id, seq, post, author, author_id, kind, content, mentions,
       requests, audience, tool_runs, files, created_at, routed, routed_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16
     WHERE NOT EXISTS (SELECT 1 FROM message_refs WHERE channel_id = $1 AND platform_message_id = $2)
       AND EXISTS (SELECT 1 FROM room_leases WHERE room_id = $1 AND token = $17
         AND expires_at > (extract(epoch FROM clock_timestamp()) * 1000)::bigint FOR SHARE)
     ON CONFLICT (channel_id, platform_message_id) DO NOTHING
     RETURNING id`,
  ),
  anySeen: statement(
    'any-seen',
    `SELECT 1 AS one FROM messages WHERE channel_id = $1 AND platform_message_id = ANY($2::text[])
     UNION ALL SELECT 1 FROM message_refs WHERE channel_id = $1 AND platform_message_id = ANY($2::text[]) LIMIT 1`,
  ),
  insertRefs: statement(
    'insert-refs',
    `INSERT INTO message_refs (channel_id, platform_message_id, message_id)
     SELECT $1, id, $3 FROM unnest($2::text[]) AS id ON CONFLICT DO NOTHING`,
  ),
  // Counts kept for stored messages, several in one statement; an encoding not given keeps what it had.
  setTokens: statement(
    'set-tokens',
    `UPDATE messages m SET tokens_o200k = coalesce(t.o200k, m.tokens_o200k),
       tokens_cl100k = coalesce(t.cl100k, m.tokens_cl100k)
     FROM unnest($1::bigint[], $2::integer[], $3::integer[]) AS t(id, o200k, cl100k) WHERE m.id = t.id`,
  ),
  setState: statement('set-state', 'UPDATE channels SET state = $1 WHERE id = $2'),
  // The fencing check, first in a fenced decision's transaction: the share lock holds off a change of hands (whose
  // UPDATE waits for this commit), so every write of the decision is made under the lease it names.
  fence: statement(
    'fence',
    `SELECT 1 AS one FROM room_leases WHERE room_id = $1 AND token = $2
       AND expires_at > (extract(epoch FROM clock_timestamp()) * 1000)::bigint FOR SHARE`,
  ),
  setPrivacy: statement('set-privacy', 'UPDATE channels SET privacy = $1 WHERE id = $2'),
  upsertRequest: statement(
    'upsert-request',
    `INSERT INTO requests (id, requester, origin, target, parent, text, awaited, answers, status, opened_at, deadline,
       opener) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (id) DO UPDATE SET requester = excluded.requester, origin = excluded.origin,
       target = excluded.target, parent = excluded.parent, text = excluded.text, awaited = excluded.awaited,
       answers = excluded.answers, status = excluded.status, opened_at = excluded.opened_at,
       deadline = excluded.deadline, opener = excluded.opener`,
  ),
  requestStatus: statement('request-status', 'UPDATE requests SET status = $1 WHERE id = $2'),
  insertNote: statement(
    'insert-note',
    // The bridge serving the note's room is told when the decision commits (LISTEN/NOTIFY, signals.ts).
    `WITH kept AS (
       INSERT INTO notes (id, room, note, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id)
     SELECT pg_notify('roundtable', 'note') FROM kept`,
  ),
  deleteNote: statement('delete-note', 'DELETE FROM notes WHERE id = $1'),
  insertDecision: statement(
    'insert-decision',
    'INSERT INTO decisions (room_id, seq, kind, record, at) VALUES ($1, $2, $3, $4, $5)',
  ),
  // A message's routing is kept on its row (see `fold`), the other records in `decisions`.
  decisions: statement(
    'decisions',
    `SELECT seq, record, at FROM (
       SELECT seq, routed AS record, routed_at AS at, 0 AS source, id FROM messages
       WHERE channel_id = $1 AND seq BETWEEN $2 AND $3 AND routed IS NOT NULL
       UNION ALL
       SELECT seq, record, at, 1 AS source, id FROM decisions WHERE room_id = $1 AND seq BETWEEN $2 AND $3) AS d
     ORDER BY seq, source, id`,
  ),
  newestPage: statement(
    'newest-page',
    `SELECT * FROM (SELECT ${TRANSCRIPT_COLUMNS} FROM messages WHERE channel_id = $1 ORDER BY id DESC LIMIT $2) AS page
     ORDER BY id`,
  ),
  olderPage: statement(
    'older-page',
    `SELECT * FROM (SELECT ${TRANSCRIPT_COLUMNS} FROM messages WHERE channel_id = $1 AND id < $2
       ORDER BY id DESC LIMIT $3) AS page ORDER BY id`,
  ),
  notes: statement('notes', 'SELECT id, room, note FROM notes ORDER BY rowid'),
  requests: statement('requests', 'SELECT * FROM requests ORDER BY id'),
  requestsOf: statement('requests-of', 'SELECT * FROM requests WHERE origin = $1 OR target = $1 ORDER BY id'),
  maxRequestId: statement('max-request-id', 'SELECT coalesce(max(id), 0) AS id FROM requests'),
  history: statement(
    'history',
    `SELECT * FROM (SELECT ${MESSAGE_COLUMNS} FROM messages WHERE channel_id = $1 ORDER BY id DESC LIMIT $2) AS newest
     ORDER BY id`,
  ),
  byPlatformId: statement(
    'by-platform-id',
    `SELECT ${MESSAGE_COLUMNS} FROM messages
     WHERE channel_id = $1 AND (platform_message_id = $2 OR id = (SELECT message_id FROM message_refs
       WHERE channel_id = $1 AND platform_message_id = $2))`,
  ),
  seen: statement(
    'seen',
    `SELECT 1 AS one FROM messages WHERE channel_id = $1 AND platform_message_id = $2
     UNION ALL SELECT 1 FROM message_refs WHERE channel_id = $1 AND platform_message_id = $2 LIMIT 1`,
  ),
  // Platform ids compare byte by byte (COLLATE "C" in the schema), so the range is exactly the prefix's ids.
  addressedBy: statement(
    'addressed-by',
    `SELECT mentions FROM messages WHERE channel_id = $1
     AND (platform_message_id = $2 OR (platform_message_id >= $3 AND platform_message_id < $4))`,
  ),
  // Before /clear deletes the messages, the snapshot takes the seq and lastHuman they told.
  keepDerived: statement(
    'keep-derived',
    `UPDATE channels SET state = (state::jsonb || jsonb_build_object(
       'seq', greatest((state::jsonb ->> 'seq')::bigint, coalesce(
         (SELECT max(seq) FROM messages WHERE channel_id = $1 AND seq IS NOT NULL), 0)),
       'lastHuman', greatest((state::jsonb ->> 'lastHuman')::bigint, coalesce(
         (SELECT max(seq) FROM messages WHERE channel_id = $1 AND seq IS NOT NULL AND kind = 'human'), 0))))::text
     WHERE id = $1 AND state IS NOT NULL`,
  ),
  keepIds: statement(
    'keep-ids',
    `INSERT INTO message_refs (channel_id, platform_message_id, message_id)
     SELECT channel_id, platform_message_id, NULL FROM messages
     WHERE channel_id = $1 AND platform_message_id IS NOT NULL ON CONFLICT DO NOTHING`,
  ),
  clear: statement('clear', 'DELETE FROM messages WHERE channel_id = $1'),
  // An edit stored as a message of its own has an id of its own (`<id>:edit:…`), not one of the platform's.
  lastRef: statement(
    'last-ref',
    `SELECT m.platform_message_id FROM messages m JOIN channels c ON c.id = m.channel_id
     WHERE c.platform = $1 AND c.channel = $2 AND m.platform_message_id IS NOT NULL
       AND m.platform_message_id NOT LIKE '%:edit:%' ORDER BY m.id DESC LIMIT 1`,
  ),
  caughtUp: statement('caught-up', 'SELECT caught_up FROM channels WHERE platform = $1 AND channel = $2'),
  setCaughtUp: statement('set-caught-up', 'UPDATE channels SET caught_up = $1 WHERE platform = $2 AND channel = $3'),
  active: statement(
    'active',
    `SELECT c.channel, c.direct_agent FROM channels c LEFT JOIN messages m ON m.channel_id = c.id
     WHERE c.platform = $1 GROUP BY c.id ORDER BY max(m.id) DESC NULLS LAST, c.id DESC`,
  ),
};
