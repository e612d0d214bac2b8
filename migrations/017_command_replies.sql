-- How the room's bridge can answer a handed-on command's operator itself when the bridge that claimed it is gone
-- (replicas): the adapter's reply route (a Discord interaction's application id and token, a Slack command's
-- response_url). A secret, never logged; kept no longer than its claim. Empty on SQLite, as command_claims is.
ALTER TABLE command_claims ADD COLUMN reply TEXT;
