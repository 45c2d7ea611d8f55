-- board schema, version 6: people see an agent session by its name, which a restarted agent
-- takes back; its id stays unique for ever.
-- sessions.name: the name people see, unique among live sessions (the requested name, or the
--   first free `name-N` while a live session has it). Live sessions that shared a name before
--   this version keep the oldest one's; the others are shown by their id.
-- retired_session_ids: ids of sessions `board agents --prune` forgot, so that an id is never
--   given again (the event log still names them).
UPDATE sessions SET name = id
 WHERE ended_at IS NULL
   AND EXISTS (SELECT 1 FROM sessions o
                WHERE o.ended_at IS NULL AND o.name = sessions.name AND o.rowid < sessions.rowid);

CREATE INDEX sessions_live_by_name ON sessions (name) WHERE ended_at IS NULL;

CREATE TABLE retired_session_ids (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    retired_at TEXT NOT NULL
) STRICT;
