-- The room as a state machine: each decision is stored in one transaction with the room's state (a JSON snapshot).
-- Work in flight (the turn being written, the posts not known to be sent) now lives in that snapshot, so the
-- journal's `work` and `outbox` tables go; tool runs are kept per room and ask.

-- Messages carry the room's sequence number and the outbox post they were posted from.
ALTER TABLE messages ADD COLUMN seq INTEGER;
ALTER TABLE messages ADD COLUMN post INTEGER;
UPDATE messages SET seq = numbered.n
  FROM (SELECT id, row_number() OVER (PARTITION BY channel_id ORDER BY id) AS n FROM messages) AS numbered
  WHERE messages.id = numbered.id;
-- No index of its own: a room's messages are numbered in the order they are stored (the row id), so the newest seq
-- is found through messages_by_channel, and each message costs no more index writes than before.

-- The room's state. A room stored before this version starts from what the old columns knew: its control and
-- count, its privacy, the humans seen (newest first, 50 kept), its sequence numbers; nothing is in flight.
ALTER TABLE channels ADD COLUMN state TEXT;
UPDATE channels SET state = json_object(
  'seq', coalesce((SELECT max(seq) FROM messages m WHERE m.channel_id = channels.id), 0),
  'control', CASE WHEN control = 'humans' AND control_reason IS NOT NULL
    THEN json_object('holder', control, 'count', consecutive, 'reason', control_reason)
    ELSE json_object('holder', control, 'count', consecutive) END,
  'privacy', privacy,
  'humans', (SELECT json_group_array(author) FROM (
    SELECT author, max(id) AS newest FROM messages m WHERE m.channel_id = channels.id AND kind = 'human'
    GROUP BY lower(author) ORDER BY newest DESC LIMIT 50)),
  'awaiting', json_object(),
  'lastText', json_object(),
  'agentPosts', json_array(),
  'lastHuman', coalesce((SELECT max(seq) FROM messages m WHERE m.channel_id = channels.id AND kind = 'human'), 0),
  'told', json_array(),
  'failed', json_array(),
  'queue', json_array(),
  'current', NULL,
  'posts', json_array(),
  'requests', json_array(),
  'away', json_array(),
  'accepted', json_array(),
  'holding', json('false'),
  'heldDrops', json_array(),
  'batch', NULL,
  'nextAsk', 1,
  'nextPost', 1
);
ALTER TABLE channels DROP COLUMN consecutive;
ALTER TABLE channels DROP COLUMN control;
ALTER TABLE channels DROP COLUMN control_reason;

-- Requests (formerly request_reply threads), upserted by id with each decision. An answer now says how it ended
-- (`outcome`: answer, pass, failed, stopped, late) instead of the `passed`/`failed` flags. The rooms' states hold
-- what is in flight: a request still live at this upgrade is in no state, so it is cancelled.
CREATE TABLE requests (
  id          INTEGER PRIMARY KEY,
  requester   TEXT    NOT NULL,
  origin      TEXT    NOT NULL,              -- room key where the requester resumes
  target      TEXT    NOT NULL,              -- room key where the request was posted
  parent      INTEGER,                       -- the request its requester was answering
  text        TEXT    NOT NULL,
  awaited     TEXT    NOT NULL,              -- JSON [{name, kind}]
  answers     TEXT    NOT NULL,              -- JSON [{participant, text, outcome, at}]
  status      TEXT    NOT NULL CHECK (status IN ('open', 'answered', 'expired', 'closed', 'cancelled')),
  opened_at   INTEGER NOT NULL,
  deadline    INTEGER NOT NULL,
  opener      TEXT    NOT NULL               -- JSON {people, audience}
);
INSERT INTO requests (id, requester, origin, target, parent, text, awaited, answers, status, opened_at, deadline, opener)
SELECT t.id, t.requester, t.origin_room, t.target_room, t.parent_id, t.request, t.awaited,
  (SELECT json_group_array(json_object(
      'participant', json_extract(a.value, '$.participant'),
      'text', json_extract(a.value, '$.text'),
      'outcome', CASE WHEN json_extract(a.value, '$.failed') THEN 'failed'
                      WHEN json_extract(a.value, '$.passed') THEN 'pass' ELSE 'answer' END,
      'at', json_extract(a.value, '$.at')))
   FROM json_each(t.answers) AS a),
  CASE WHEN t.status IN ('open', 'answered', 'expired') THEN 'cancelled' ELSE t.status END,
  t.opened_at, t.deadline, coalesce(t.opener, '{"people":[],"audience":null}')
FROM threads t;
DROP INDEX threads_live;
DROP TABLE threads;
CREATE INDEX requests_by_origin ON requests (origin);
CREATE INDEX requests_by_target ON requests (target);

-- Notes from one room's decision to another room, kept until that room has taken them.
CREATE TABLE notes (
  id          TEXT    PRIMARY KEY,
  room        TEXT    NOT NULL,                -- the room key it is for
  note        TEXT    NOT NULL,                -- JSON
  created_at  INTEGER NOT NULL
);

-- Tool calls of a turn, by the room and its ask: a turn taken again after a restart is answered from here.
DROP TABLE tool_runs;
DROP TABLE outbox;
DROP TABLE work;
CREATE TABLE tool_runs (
  id          INTEGER PRIMARY KEY,
  room        TEXT    NOT NULL,                -- room key (platform:channel)
  ask         INTEGER NOT NULL,                -- the room's ask id
  tool        TEXT    NOT NULL,
  args        TEXT    NOT NULL,                -- the arguments as canonical JSON
  status      TEXT    NOT NULL CHECK (status IN ('started', 'ok', 'refused', 'failed')),
  input       TEXT,
  output      TEXT,
  started_at  INTEGER NOT NULL
);
CREATE INDEX tool_runs_by_ask ON tool_runs (room, ask, id);
