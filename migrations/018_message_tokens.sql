-- What a message costs in an agent's context, per encoding (its rendering with tool runs and file lines, no
-- approximation margin): counted once, the first time a turn reads the message, and kept here so a restart or
-- another replica does not count it again. NULL: not counted yet in that encoding.
ALTER TABLE messages ADD COLUMN tokens_o200k INTEGER;
ALTER TABLE messages ADD COLUMN tokens_cl100k INTEGER;
