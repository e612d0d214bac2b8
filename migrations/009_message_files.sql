-- The bridge's lines about a message's uploaded files (`[file: uploads/a.csv (text/csv, 1.2 KB)]`), kept apart from
-- what its author wrote (JSON array; NULL when none): they are shown to the agents with the message, never read for
-- mentions, and what the author wrote cannot pass for one of them. Messages stored before keep their lines in their
-- text, as they were.
ALTER TABLE messages ADD COLUMN files TEXT;
