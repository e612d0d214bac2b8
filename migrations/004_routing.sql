-- Under privacy: who may see a message (JSON array of names, author included); NULL: everyone.
ALTER TABLE messages ADD COLUMN audience TEXT;

-- A room's privacy as set by an operator (/privacy mentions|off); NULL: the configured default.
ALTER TABLE channels ADD COLUMN privacy TEXT CHECK (privacy IN ('off', 'mentions'));

-- A chat request that expired or was declined is told to its sender once, in its next turn.
ALTER TABLE chat_requests ADD COLUMN sender_told INTEGER NOT NULL DEFAULT 0;

-- What the requester's turn was answering when it asked (JSON {people, audience}): its resume answers the same.
ALTER TABLE threads ADD COLUMN opener TEXT;
