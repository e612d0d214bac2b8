-- Spending limits: each day's spend per scope ('bridge', 'room:<key>', 'agent:<name>') in nano-dollars (1e-9 USD),
-- what calls under way hold, and the limits operators set with /budget (they win over the configuration).
-- (The twin of migrations/010_spend.sql.)
CREATE TABLE spend (
  day      text COLLATE "C" NOT NULL,      -- YYYY-MM-DD in SPEND_TZ
  scope    text COLLATE "C" NOT NULL,
  spent    bigint NOT NULL DEFAULT 0,
  reserved bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (day, scope)
);

-- A call's hold until it is settled; one left here by a stopped bridge is spent whole at the next start.
CREATE TABLE spend_holds (
  id         text   PRIMARY KEY,
  day        text   NOT NULL,
  scopes     text   NOT NULL,              -- JSON [{scope, amount}]
  created_at bigint NOT NULL
);

CREATE TABLE spend_limits (
  scope      text COLLATE "C" PRIMARY KEY,
  limit_nano bigint,                       -- NULL: no limit
  set_at     bigint NOT NULL
);
