-- Summaries of blocks of a room's history that left the agents' windows (SUMMARY_MODEL): made once per room and
-- block, shown where the block stood. A block is the room's messages whose ids fall in [first_id, first_id + width).
CREATE TABLE block_summaries (
  room       TEXT    NOT NULL,             -- the room's key, platform:channel
  first_id   INTEGER NOT NULL,
  width      INTEGER NOT NULL,
  messages   INTEGER NOT NULL,             -- how many of the room's messages the block holds
  model      TEXT    NOT NULL,
  summary    TEXT,                         -- NULL: not summarised (a message in it has a privacy audience)
  created_at INTEGER NOT NULL,
  PRIMARY KEY (room, width, first_id)
);
