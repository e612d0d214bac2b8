-- Who may DM the agents (DM_POLICY=pair): the people an operator approved, and the codes waiting for an operator.
-- (The twin of migrations/019_access.sql.)
CREATE TABLE access_paired (
  platform    text COLLATE "C" NOT NULL,
  user_id     text COLLATE "C" NOT NULL,
  name        text   NOT NULL,
  approved_by text   NOT NULL,
  approved_at bigint NOT NULL,
  PRIMARY KEY (platform, user_id)
);

-- One code per person at a time; a code is shown to its person only and approved once.
CREATE TABLE access_codes (
  code       text COLLATE "C" PRIMARY KEY,
  platform   text COLLATE "C" NOT NULL,
  user_id    text COLLATE "C" NOT NULL,
  name       text   NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  UNIQUE (platform, user_id)
);
