-- Rooms: one per (platform, channel). A DM room belongs to one agent.
CREATE TABLE channels (
  id          INTEGER PRIMARY KEY,
  platform    TEXT    NOT NULL,
  channel     TEXT    NOT NULL,
  direct_agent TEXT,
  consecutive INTEGER NOT NULL DEFAULT 0,      -- consecutive agent messages (turn limit)
  control     TEXT    NOT NULL DEFAULT 'agents' CHECK (control IN ('agents', 'humans')),
  control_reason TEXT,
  created_at  INTEGER NOT NULL,
  UNIQUE (platform, channel)
);

CREATE TABLE messages (
  id          INTEGER PRIMARY KEY,
  channel_id  INTEGER NOT NULL REFERENCES channels(id),
  platform_message_id TEXT,                    -- the platform's id (the first chunk's, for a long reply)
  author      TEXT    NOT NULL,                -- display name, without '@'
  author_id   TEXT    NOT NULL,
  kind        TEXT    NOT NULL CHECK (kind IN ('human', 'agent', 'system')),
  content     TEXT    NOT NULL,
  mentions    TEXT    NOT NULL DEFAULT '[]',   -- JSON array of agent names
  tool_runs   TEXT,                            -- JSON array of {tool, input, output}
  created_at  INTEGER NOT NULL,
  -- One platform message is stored once, however many bots receive it.
  UNIQUE (channel_id, platform_message_id)
);
CREATE INDEX messages_by_channel ON messages (channel_id, id);

-- The further platform ids of a reply posted in several chunks (so their echoes are recognised),
-- and ids kept when /clear forgets a room's messages.
CREATE TABLE message_refs (
  channel_id  INTEGER NOT NULL REFERENCES channels(id),
  platform_message_id TEXT NOT NULL,
  message_id  INTEGER REFERENCES messages(id) ON DELETE SET NULL,
  UNIQUE (channel_id, platform_message_id)
);
