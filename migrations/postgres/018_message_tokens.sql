-- What a message costs in an agent's context, per encoding (its rendering with tool runs and file lines, no
-- approximation margin): counted once, the first time a turn reads the message, and kept here so a restart or
-- another replica does not count it again. NULL: not counted yet in that encoding.
-- (The twin of migrations/018_message_tokens.sql.)
ALTER TABLE messages ADD COLUMN tokens_o200k integer;
ALTER TABLE messages ADD COLUMN tokens_cl100k integer;
