-- The bridges sharing one database (replicas): each writes its row at start and marks it seen with every renewal of
-- its room leases (every third of a lease), so the others know which replicas are live (seen within a lease), on which
-- host, with which sandbox engine and workspaces. SQLite's one bridge needs none of it: this table stays empty there,
-- and is created so both dialects keep one schema and one numbering.
CREATE TABLE replicas (
  id          TEXT    PRIMARY KEY,            -- REPLICA_ID
  host        TEXT    NOT NULL,               -- the host name the replica runs on
  engine      TEXT,                           -- the sandbox engine's identity (Docker's engine ID); NULL: none known
  workspaces  TEXT    NOT NULL,               -- SANDBOX_WORKSPACES: bind or volume
  started_at  INTEGER NOT NULL,
  seen_at     INTEGER NOT NULL
);

-- Which replica made a spending hold: a starting replica spends whole only the holds of replicas that are not live
-- (its own previous run's included), never those of calls another replica has under way. NULL: made before this
-- migration, or by SQLite's one bridge.
ALTER TABLE spend_holds ADD COLUMN replica TEXT;
