-- An agent's knowledge and recent actions remember where they come from: the room, and under privacy the audience of
-- the exchange (a JSON array of lower-cased names, sorted; '' or NULL when the whole room may see it). They are shown
-- only where that audience may see them: a DM's only in that DM, a private exchange's only to its participants.
-- (The twin of migrations/008_private_memory.sql.)

-- Knowledge is kept per place: the same key may hold one value in a room and another in a DM. Entries kept before
-- this version do not say where they were learnt, so they get no room ('') and are shown nowhere.
CREATE TABLE knowledge_by_place (
  agent      text COLLATE "C" NOT NULL,
  room       text COLLATE "C" NOT NULL,
  audience   text COLLATE "C" NOT NULL DEFAULT '',
  key        text COLLATE "C" NOT NULL,
  value      text   NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (agent, room, audience, key)
);
INSERT INTO knowledge_by_place (agent, room, audience, key, value, updated_at)
  SELECT agent, '', '', key, value, updated_at FROM knowledge;
DROP TABLE knowledge;
ALTER TABLE knowledge_by_place RENAME TO knowledge;
ALTER TABLE knowledge RENAME CONSTRAINT knowledge_by_place_pkey TO knowledge_pkey;

-- Actions carry their exchange's audience; they are kept (and pruned) per agent and room. The actions logged before
-- this version may come from a private exchange, which nothing recorded: that short log starts again empty.
DELETE FROM agent_actions;
ALTER TABLE agent_actions ADD COLUMN audience text;
DROP INDEX agent_actions_by_agent;
CREATE INDEX agent_actions_by_room ON agent_actions (agent, room, id);
