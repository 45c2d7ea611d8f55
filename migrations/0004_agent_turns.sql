-- What agent CLIs report through their hooks, and when a session counts as stuck.
-- idle_since: RFC 3339 time the agent finished its turn (a Stop/AfterAgent hook); any later call
--   with its identity clears it.
-- contacted_at: RFC 3339 time of the first call or hook with the session's identity.
-- attention_ms: a session not contacted this long after its start needs attention (a first-run
--   dialog, most likely); NULL: never.
ALTER TABLE sessions ADD COLUMN idle_since TEXT;
ALTER TABLE sessions ADD COLUMN contacted_at TEXT;
ALTER TABLE sessions ADD COLUMN attention_ms INTEGER CHECK (attention_ms IS NULL OR attention_ms >= 0);
