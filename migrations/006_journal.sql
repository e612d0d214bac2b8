-- Work in flight, so a restart resumes exactly what a crash cut, once.
-- A round: the agents woken by one message (its plan), in order. A turn: one agent's turn, named by what
-- woke it (`round:<id>/<agent>`, `thread:<id>/<agent>`, `resume:<id>`): the same turn is never run twice.
CREATE TABLE work (
  id          INTEGER PRIMARY KEY,
  room        TEXT    NOT NULL,                -- room key (platform:channel)
  kind        TEXT    NOT NULL CHECK (kind IN ('round', 'turn')),
  key         TEXT    NOT NULL,
  parent_id   INTEGER REFERENCES work(id),     -- a turn's round
  agent       TEXT,
  message_id  INTEGER,                         -- a round: the message it answers
  frame       TEXT,                            -- JSON: a round's plan; a turn's situation and what it answers
  status      TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'dropped')),
  outcome     TEXT,                            -- a turn: posted | passed | failed | ended
  attempts    INTEGER NOT NULL DEFAULT 1,
  created_at  INTEGER NOT NULL,
  UNIQUE (room, key)
);
CREATE INDEX work_open ON work (room, id) WHERE status = 'open';
CREATE INDEX work_by_parent ON work (parent_id) WHERE parent_id IS NOT NULL;

-- Every post is written here before it is sent; its key makes a resend idempotent where the platform can.
CREATE TABLE outbox (
  id          INTEGER PRIMARY KEY,
  channel_id  INTEGER NOT NULL REFERENCES channels(id),
  work_id     INTEGER REFERENCES work(id),
  purpose     TEXT    NOT NULL CHECK (purpose IN ('reply', 'action', 'system')),
  agent       TEXT,                            -- NULL: the bridge's own line
  text        TEXT    NOT NULL,
  meta        TEXT,                            -- JSON: tool runs, what it answers, whom it asks, what follows
  status      TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  platform_ids TEXT,                           -- JSON array, once sent
  created_at  INTEGER NOT NULL
);
CREATE INDEX outbox_pending ON outbox (channel_id, id) WHERE status = 'pending';

-- Tool calls of a turn: a re-run turn is answered from here instead of running a side effect again.
CREATE TABLE tool_runs (
  id          INTEGER PRIMARY KEY,
  work_id     INTEGER NOT NULL REFERENCES work(id),
  tool        TEXT    NOT NULL,
  args        TEXT    NOT NULL,                -- the arguments as canonical JSON
  status      TEXT    NOT NULL CHECK (status IN ('started', 'ok', 'refused', 'failed')),
  input       TEXT,
  output      TEXT,
  started_at  INTEGER NOT NULL
);
CREATE INDEX tool_runs_by_work ON tool_runs (work_id, id);

-- Where a catch-up starts: the newest platform id up to which the room has nothing missing.
ALTER TABLE channels ADD COLUMN caught_up TEXT;
