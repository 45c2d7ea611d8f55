-- Messages between agent sessions and operators: `board send` writes one, `board inbox` reads
-- (and marks read) the unread ones of its caller. A message is also a `message` event.
CREATE TABLE messages (
    id        INTEGER PRIMARY KEY,
    sender    TEXT NOT NULL,            -- session id, or 'operator'
    recipient TEXT NOT NULL,            -- session id, or 'operator'
    text      TEXT NOT NULL,
    sent_at   TEXT NOT NULL,
    read_at   TEXT,
    -- 1 when it answered the recipient's `board wait` (and so ended the wait).
    answer    INTEGER NOT NULL DEFAULT 0 CHECK (answer IN (0, 1))
) STRICT;

CREATE INDEX messages_unread ON messages (recipient) WHERE read_at IS NULL;

-- The terminal the agent runs on (its launcher's stdin, e.g. /dev/pts/3), if any: input there
-- counts as activity, and a claim about to lapse is announced there.
ALTER TABLE sessions ADD COLUMN tty TEXT;
