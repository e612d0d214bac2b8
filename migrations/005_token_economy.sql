-- Tokens each agent's model calls used, per room, as the servers reported them (`usage`).
CREATE TABLE token_usage (
  agent   TEXT    NOT NULL,
  room    TEXT    NOT NULL,                  -- room key, platform:channel
  calls   INTEGER NOT NULL DEFAULT 0,
  input   INTEGER NOT NULL DEFAULT 0,
  cached  INTEGER NOT NULL DEFAULT 0,        -- part of input served from the provider's prompt cache
  output  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (agent, room)
);

-- What each agent remembers (its `remember` and `forget` tools), kept across restarts.
CREATE TABLE knowledge (
  agent      TEXT    NOT NULL,
  key        TEXT    NOT NULL,
  value      TEXT    NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (agent, key)
);

-- A short log of each agent's recent actions (tool runs, messages sent elsewhere).
CREATE TABLE agent_actions (
  id     INTEGER PRIMARY KEY,
  agent  TEXT    NOT NULL,
  room   TEXT    NOT NULL,
  action TEXT    NOT NULL,
  at     INTEGER NOT NULL
);
CREATE INDEX agent_actions_by_agent ON agent_actions (agent, id);

-- Embeddings of room messages (float32, little-endian), for retrieving relevant older messages.
CREATE TABLE message_embeddings (
  message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
  model      TEXT    NOT NULL,
  vector     BLOB    NOT NULL
);
