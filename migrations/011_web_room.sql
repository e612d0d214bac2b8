-- Why a room decided as it did: the room machine's records (who was woken and why, who passed, failed or was
-- stopped, hand-backs, dropped questions, requests), stored with the decision that made them, by the message they
-- are about. The operator console reads them.
CREATE TABLE decisions (
  id       INTEGER PRIMARY KEY,
  room_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  seq      INTEGER NOT NULL,                 -- the room's seq of the message it is about
  kind     TEXT    NOT NULL,
  record   TEXT    NOT NULL,                 -- JSON, the record as the room machine made it
  at       INTEGER NOT NULL
);
CREATE INDEX decisions_by_message ON decisions (room_id, seq);
-- How a message was routed is kept on its own row, written with it in one statement.
ALTER TABLE messages ADD COLUMN routed TEXT;       -- JSON, the 'routed' record
ALTER TABLE messages ADD COLUMN routed_at INTEGER;

-- The web room's people, their one-time sign-in codes and their sessions. Codes and session tokens are kept as
-- SHA-256 digests only: the database never holds what a browser or a link carries.
CREATE TABLE web_people (
  name        TEXT    PRIMARY KEY COLLATE NOCASE,
  operator    INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL
);
CREATE TABLE web_invites (
  code_hash   TEXT    PRIMARY KEY,
  name        TEXT    NOT NULL COLLATE NOCASE REFERENCES web_people(name) ON DELETE CASCADE,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
);
CREATE TABLE web_sessions (
  token_hash  TEXT    PRIMARY KEY,
  name        TEXT    NOT NULL COLLATE NOCASE REFERENCES web_people(name) ON DELETE CASCADE,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  seen_at     INTEGER NOT NULL
);
CREATE INDEX web_sessions_by_name ON web_sessions (name);
CREATE INDEX web_invites_by_name ON web_invites (name);
