-- Which agents a message asked for a reply (a subset of its mentions: mentioning the requester
-- of the request one is answering is an answer, not a new request). NULL: same as mentions.
ALTER TABLE messages ADD COLUMN requests TEXT;

-- request_reply threads: who asked whom, where, the answers so far, and the deadline.
CREATE TABLE threads (
  id          INTEGER PRIMARY KEY,
  requester   TEXT    NOT NULL,
  origin_room TEXT    NOT NULL,              -- room key where the requester resumes
  target_room TEXT    NOT NULL,              -- room key where the request was posted
  parent_id   INTEGER REFERENCES threads(id),
  request     TEXT    NOT NULL,
  awaited     TEXT    NOT NULL,              -- JSON [{name, kind}]
  answers     TEXT    NOT NULL DEFAULT '[]', -- JSON [{participant, text, passed, at}]
  status      TEXT    NOT NULL CHECK (status IN ('open', 'answered', 'expired', 'closed', 'cancelled')),
  opened_at   INTEGER NOT NULL,
  deadline    INTEGER NOT NULL
);
CREATE INDEX threads_live ON threads (status) WHERE status IN ('open', 'answered', 'expired');

-- Private agent-to-agent chats: requests, and the pair's conversation.
CREATE TABLE chat_requests (
  id          INTEGER PRIMARY KEY,
  from_agent  TEXT    NOT NULL,
  to_agent    TEXT    NOT NULL,
  reason      TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'expired')),
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);
CREATE INDEX chat_requests_pending ON chat_requests (to_agent) WHERE status = 'pending';
