-- The bridge's lines about a message's uploaded files, kept apart from what its author wrote (JSON array; NULL when
-- none). (The twin of migrations/009_message_files.sql.)
ALTER TABLE messages ADD COLUMN files text;
