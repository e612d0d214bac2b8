-- Who may DM the agents (DM_POLICY=pair): the people an operator approved, and the codes waiting for an operator.
CREATE TABLE access_paired (
  platform    TEXT    NOT NULL,
  user_id     TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  approved_by TEXT    NOT NULL,
  approved_at INTEGER NOT NULL,
  PRIMARY KEY (platform, user_id)
);

-- One code per person at a time; a code is shown to its person only and approved once.
CREATE TABLE access_codes (
  code       TEXT    PRIMARY KEY,
  platform   TEXT    NOT NULL,
  user_id    TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  UNIQUE (platform, user_id)
);
