-- Operators' tokens for the bridge's MCP endpoint: the token's id and the SHA-256 digest of its secret only.
-- (The twin of migrations/020_mcp_tokens.sql.)
CREATE TABLE mcp_tokens (
  id           text COLLATE "C" PRIMARY KEY,
  secret_hash  text   NOT NULL,
  name         text   COLLATE roundtable_nocase NOT NULL REFERENCES web_people(name) ON DELETE CASCADE,
  created_at   bigint NOT NULL,
  used_at      bigint
);
CREATE INDEX mcp_tokens_by_name ON mcp_tokens (name);
