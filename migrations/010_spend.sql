-- Spending limits: each day's spend per scope ('bridge', 'room:<key>', 'agent:<name>') in nano-dollars (1e-9 USD),
-- what calls under way hold, and the limits operators set with /budget (they win over the configuration).
CREATE TABLE spend (
  day      TEXT    NOT NULL,               -- YYYY-MM-DD in SPEND_TZ
  scope    TEXT    NOT NULL,
  spent    INTEGER NOT NULL DEFAULT 0,
  reserved INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, scope)
);

-- A call's hold until it is settled; one left here by a stopped bridge is spent whole at the next start.
CREATE TABLE spend_holds (
  id         TEXT    PRIMARY KEY,
  day        TEXT    NOT NULL,
  scopes     TEXT    NOT NULL,             -- JSON [{scope, amount}]
  created_at INTEGER NOT NULL
);

CREATE TABLE spend_limits (
  scope      TEXT    PRIMARY KEY,
  limit_nano INTEGER,                      -- NULL: no limit
  set_at     INTEGER NOT NULL
);
