-- The bridges sharing this database (replicas): each writes its row at start and marks it seen with every renewal of
-- its room leases (every third of a lease, by this database's clock), so the others know which replicas are live
-- (seen within a lease), on which host, with which sandbox engine and workspaces.
-- (The twin of migrations/016_replica_registry.sql.)
CREATE TABLE replicas (
  id          text   PRIMARY KEY,             -- REPLICA_ID
  host        text   NOT NULL,                -- the host name the replica runs on
  engine      text,                           -- the sandbox engine's identity (Docker's engine ID); NULL: none known
  workspaces  text   NOT NULL,                -- SANDBOX_WORKSPACES: bind or volume
  started_at  bigint NOT NULL,
  seen_at     bigint NOT NULL
);

-- Which replica made a spending hold: a starting replica spends whole only the holds of replicas that are not live
-- (its own previous run's included), never those of calls another replica has under way. NULL: made before this
-- migration.
ALTER TABLE spend_holds ADD COLUMN replica text;
