-- Rooms: one per (platform, channel). A DM room belongs to one agent.
CREATE TABLE channels (
  id          INTEGER PRIMARY KEY,
  platform    TEXT    NOT NULL,
  channel     TEXT    NOT NULL,
  direct_agent TEXT,
  consecutive INTEGER NOT NULL DEFAULT 0,      -- consecutive agent messages (turn limit)
  control     TEXT    NOT NULL DEFAULT 'humans' CHECK (control IN ('agents', 'humans')),
  control_reason TEXT,
  created_at  INTEGER NOT NULL,
  UNIQUE (platform, channel)
);

CREATE TABLE messages (
  id          INTEGER PRIMARY KEY,
  channel_id  INTEGER NOT NULL REFERENCES channels(id),
  author      TEXT    NOT NULL,                -- display name, without '@'
  author_id   TEXT    NOT NULL,
  kind        TEXT    NOT NULL CHECK (kind IN ('human', 'agent', 'system')),
  content     TEXT    NOT NULL,
  mentions    TEXT    NOT NULL DEFAULT '[]',   -- JSON array of agent names
  tool_runs   TEXT,                            -- JSON array of {tool, input, output}
  created_at  INTEGER NOT NULL
);
CREATE INDEX messages_by_channel ON messages (channel_id, id);

-- Every platform message id ever seen in a room: the dedupe key. A long reply posted as
-- several chunks has one row per chunk pointing at the same message.
CREATE TABLE message_refs (
  channel_id  INTEGER NOT NULL REFERENCES channels(id),
  platform_message_id TEXT NOT NULL,
  message_id  INTEGER REFERENCES messages(id) ON DELETE SET NULL,
  UNIQUE (channel_id, platform_message_id)
);
