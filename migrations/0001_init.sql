-- board schema, version 1.
-- Times: *_at columns are RFC 3339 UTC text for people; *_ms columns are milliseconds on the
-- board's lease clock (CLOCK_BOOTTIME of the boot named in meta.boot_id), immune to wall-clock steps.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE goals (
    id     INTEGER PRIMARY KEY,
    text   TEXT NOT NULL,
    set_at TEXT NOT NULL,
    set_by TEXT NOT NULL
) STRICT;

CREATE TABLE tasks (
    id              INTEGER PRIMARY KEY,
    title           TEXT NOT NULL,
    body            TEXT NOT NULL DEFAULT '',
    priority        INTEGER NOT NULL DEFAULT 0,
    state           TEXT NOT NULL DEFAULT 'open'
                    CHECK (state IN ('open', 'claimed', 'done', 'cancelled')),
    -- The fencing token: incremented in the transaction that grants a claim, never decreased.
    generation      INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    done_by         TEXT,
    done_generation INTEGER,
    done_at         TEXT
) STRICT;

CREATE INDEX tasks_by_state ON tasks (state, priority DESC, id);

CREATE TABLE task_deps (
    task_id  INTEGER NOT NULL REFERENCES tasks (id),
    after_id INTEGER NOT NULL REFERENCES tasks (id),
    PRIMARY KEY (task_id, after_id),
    CHECK (task_id <> after_id)
) STRICT;

CREATE TABLE sessions (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    token_hash     TEXT NOT NULL,
    boot_id        TEXT NOT NULL,
    launcher_pid   INTEGER,
    launcher_start INTEGER,
    pid            INTEGER,
    pid_start      INTEGER,
    pane_id        TEXT,
    pane_pid       INTEGER,
    pane_start     INTEGER,
    started_at     TEXT NOT NULL,
    last_seen_at   TEXT,
    waiting        TEXT,
    ended_at       TEXT,
    end_reason     TEXT
) STRICT;

CREATE TABLE claims (
    id         INTEGER PRIMARY KEY,
    task_id    INTEGER NOT NULL REFERENCES tasks (id),
    session_id TEXT NOT NULL REFERENCES sessions (id),
    generation INTEGER NOT NULL,
    granted_at TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    ended_at   TEXT,
    -- 'done', 'release', 'expel', 'lapse', 'cancel'
    end_kind   TEXT,
    end_reason TEXT
) STRICT;

-- At most one live claim per task, enforced by the store itself.
CREATE UNIQUE INDEX claims_live_per_task ON claims (task_id) WHERE ended_at IS NULL;
CREATE INDEX claims_live_by_session ON claims (session_id) WHERE ended_at IS NULL;
CREATE INDEX claims_by_task ON claims (task_id, generation);

CREATE TABLE notes (
    id         INTEGER PRIMARY KEY,
    task_id    INTEGER NOT NULL REFERENCES tasks (id),
    author     TEXT NOT NULL,
    generation INTEGER,
    text       TEXT NOT NULL,
    at         TEXT NOT NULL
) STRICT;

CREATE INDEX notes_by_task ON notes (task_id);

-- Append-only: no UPDATE or DELETE ever touches it.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL,
    task_id    INTEGER,
    session_id TEXT,
    generation INTEGER,
    reason     TEXT
) STRICT;

CREATE INDEX events_by_task ON events (task_id);

CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE (ABORT, 'events are append-only'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE (ABORT, 'events are append-only'); END;

-- Answers to requests that carried an op_id, so a retry is not applied twice.
CREATE TABLE op_results (
    identity TEXT NOT NULL,
    op_id    TEXT NOT NULL,
    response TEXT NOT NULL,
    at       TEXT NOT NULL,
    PRIMARY KEY (identity, op_id)
) STRICT;
