-- Recall over a room's whole history: each vector names its room and who may see its message (a copy of the
-- message's audience; NULL: everyone in the room), so a search reads only the vectors of one room that an agent
-- may see, without reading the messages. A search scans them (Debian's Postgres has no vector index).
-- (The twin of migrations/013_recall.sql.)
ALTER TABLE message_embeddings ADD COLUMN room_id bigint;
ALTER TABLE message_embeddings ADD COLUMN audience text;
UPDATE message_embeddings e SET room_id = m.channel_id, audience = m.audience FROM messages m WHERE m.id = e.message_id;
CREATE INDEX message_embeddings_by_room ON message_embeddings (room_id, model, audience);
