-- Operators' tokens for the bridge's MCP endpoint (`npm run mcp -- --new-token <name>`): a token is `rtmcp_<id>_<secret>`;
-- the store keeps its id and the SHA-256 digest of its secret only. Revoking a person (or their tokens) deletes them.
CREATE TABLE mcp_tokens (
  id           TEXT    PRIMARY KEY,
  secret_hash  TEXT    NOT NULL,
  name         TEXT    NOT NULL COLLATE NOCASE REFERENCES web_people(name) ON DELETE CASCADE,
  created_at   INTEGER NOT NULL,
  used_at      INTEGER
);
CREATE INDEX mcp_tokens_by_name ON mcp_tokens (name);
