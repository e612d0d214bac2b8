-- Room leases: which bridge serves a room when several share this database (replicas). A lease is held until
-- `expires_at` (ms since the epoch, by this database's clock, so replicas' clocks do not matter) and renewed well
-- before; `token` grows every time the room changes hands, and every decision a holder commits carries it, so a
-- holder that lost the room (paused, cut off) has its writes refused. A released lease is expired, never deleted:
-- its token must keep growing.
CREATE TABLE room_leases (
  room_id     bigint PRIMARY KEY REFERENCES channels(id),
  holder      text   NOT NULL,               -- REPLICA_ID of the bridge serving the room
  token       bigint NOT NULL,               -- fencing token: grows with every change of hands
  expires_at  bigint NOT NULL
);
CREATE INDEX room_leases_by_holder ON room_leases (holder);
