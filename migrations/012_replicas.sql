-- Room leases: which bridge serves a room when several share one Postgres database (replicas). A lease is held until
-- `expires_at` (ms since the epoch, by the database's clock) and renewed well before; `token` grows every time the
-- room changes hands, and every decision a holder commits carries it, so a holder that lost the room (paused, cut
-- off) has its writes refused. One bridge owns a SQLite data folder and every room in it: this table stays empty
-- there, and is created so both dialects keep one schema and one numbering.
CREATE TABLE room_leases (
  room_id     INTEGER PRIMARY KEY REFERENCES channels(id),
  holder      TEXT    NOT NULL,               -- REPLICA_ID of the bridge serving the room
  token       INTEGER NOT NULL,               -- fencing token: grows with every change of hands
  expires_at  INTEGER NOT NULL
);
CREATE INDEX room_leases_by_holder ON room_leases (holder);

-- Platform events a bridge received for a room another bridge serves (Slack gives each event to one bridge only; a
-- room's holder may also have died before storing one): kept until the room's holder has taken them. Empty on
-- SQLite too.
CREATE TABLE room_inbox (
  id          INTEGER PRIMARY KEY,
  platform    TEXT    NOT NULL,
  channel     TEXT    NOT NULL,
  platform_message_id TEXT NOT NULL,
  event       TEXT    NOT NULL,               -- JSON: the event as the adapter gave it
  received_at INTEGER NOT NULL,
  UNIQUE (platform, channel, platform_message_id)
);
