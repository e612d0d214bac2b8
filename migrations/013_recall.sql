-- Recall over a room's whole history: each vector names its room and who may see its message (a copy of the
-- message's audience; NULL: everyone in the room), so a search reads only the vectors of one room that an agent
-- may see, without reading the messages.
ALTER TABLE message_embeddings ADD COLUMN room_id INTEGER;
ALTER TABLE message_embeddings ADD COLUMN audience TEXT;
UPDATE message_embeddings SET
  room_id = (SELECT channel_id FROM messages WHERE messages.id = message_embeddings.message_id),
  audience = (SELECT audience FROM messages WHERE messages.id = message_embeddings.message_id);
CREATE INDEX message_embeddings_by_room ON message_embeddings (room_id, model, audience);
