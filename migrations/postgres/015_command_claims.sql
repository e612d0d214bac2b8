-- Operator commands and interactions by their platform id, when several bridges share this database (replicas): a
-- Discord interaction may reach every bridge, and the first to store it claims it; the others do nothing. A bridge
-- that claims a command for a room another bridge serves leaves it here `waiting`; the room's bridge takes it, carries
-- it out and stores its `answer`, which the bridge that received it gives to the operator. An agent's post into a
-- room another bridge serves is handed on the same way (id `action:<call>`; its answer is the action's result).
CREATE TABLE command_claims (
  id          text   PRIMARY KEY,             -- platform:the platform's id of the command (interaction id, trigger id)
  platform    text   NOT NULL,
  channel     text   NOT NULL,
  event       text   NOT NULL,                -- JSON: the command as the adapter gave it
  received_by text   NOT NULL,                -- REPLICA_ID of the bridge that claimed it
  state       text   NOT NULL,                -- taken (being carried out), waiting (for the room's bridge), answered
  answer      text,
  received_at bigint NOT NULL
);
CREATE INDEX command_claims_waiting ON command_claims (state, received_at);
