-- Summaries of blocks of a room's history that left the agents' windows (SUMMARY_MODEL): made once per room and
-- block, shown where the block stood. A block is the room's messages whose ids fall in [first_id, first_id + width).
-- (The twin of migrations/014_summaries.sql.)
CREATE TABLE block_summaries (
  room       text COLLATE "C" NOT NULL,    -- the room's key, platform:channel
  first_id   bigint NOT NULL,
  width      bigint NOT NULL,
  messages   bigint NOT NULL,              -- how many of the room's messages the block holds
  model      text   NOT NULL,
  summary    text,                         -- NULL: not summarised (a message in it has a privacy audience)
  created_at bigint NOT NULL,
  PRIMARY KEY (room, width, first_id)
);
