-- board schema for the PostgreSQL store, version 1: the SQLite schema (migrations/0001-0005)
-- in one step, plus the hosts that share the store.
-- Times: *_at columns are RFC 3339 UTC text for people (the server's clock); *_ms columns are
-- milliseconds since the Unix epoch on the server's clock (board_now_ms()), the only clock
-- leases and host sessions are computed and compared with, so skew between hosts cannot matter.

-- The store's clock, ms since the Unix epoch. clock_timestamp(), not now(): a transaction that
-- waited for the write lock must not compare with the time it began. The setting
-- board.caller_now_ms exists for the store's own tests only (they drive a clock of their own);
-- no board sets it.
CREATE FUNCTION board_now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $$
    SELECT COALESCE(NULLIF(current_setting('board.caller_now_ms', true), '')::bigint,
                    (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
$$;

-- The server's wall clock as RFC 3339 UTC text with milliseconds, for *_at columns.
CREATE FUNCTION board_wall() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

CREATE TABLE meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE goals (
    id     bigserial PRIMARY KEY,
    text   text NOT NULL,
    set_at text NOT NULL,
    set_by text NOT NULL
);

CREATE TABLE tasks (
    id              bigserial PRIMARY KEY,
    title           text NOT NULL,
    body            text NOT NULL DEFAULT '',
    priority        bigint NOT NULL DEFAULT 0,
    state           text NOT NULL DEFAULT 'open'
                    CHECK (state IN ('open', 'claimed', 'done', 'cancelled')),
    -- The fencing token: incremented by the statement that grants a claim, never decreased.
    generation      bigint NOT NULL DEFAULT 0 CHECK (generation >= 0),
    created_at      text NOT NULL,
    updated_at      text NOT NULL,
    done_by         text,
    done_generation bigint,
    done_at         text
);

-- The claim of the best ready task reads open tasks in this order; without a partial index the
-- claim scans every finished task too.
CREATE INDEX tasks_open ON tasks (priority DESC, id) WHERE state = 'open';
CREATE INDEX tasks_by_state ON tasks (state, id);

CREATE TABLE task_deps (
    task_id  bigint NOT NULL REFERENCES tasks (id),
    after_id bigint NOT NULL REFERENCES tasks (id),
    PRIMARY KEY (task_id, after_id),
    CHECK (task_id <> after_id)
);

CREATE INDEX task_deps_by_after ON task_deps (after_id);

-- One row per `board serve` run on a host: kept alive by its heartbeat; a row whose expiry has
-- passed is ended by whichever host sweeps, with its host's agent sessions and their claims.
CREATE TABLE hosts (
    id         bigserial PRIMARY KEY,
    name       text NOT NULL,
    pid        bigint NOT NULL,
    started_at text NOT NULL,
    beat_ms    bigint NOT NULL,
    expires_ms bigint NOT NULL,
    ended_at   text,
    end_reason text
);

CREATE INDEX hosts_live ON hosts (expires_ms) WHERE ended_at IS NULL;
CREATE INDEX hosts_by_name ON hosts (name) WHERE ended_at IS NULL;

CREATE TABLE sessions (
    id             text PRIMARY KEY,
    -- Registration order (SQLite's rowid).
    seq            bigserial UNIQUE,
    -- The host whose board registered it (hosts.name): only that board watches its processes.
    host           text NOT NULL,
    name           text NOT NULL,
    token_hash     text NOT NULL,
    boot_id        text NOT NULL,
    launcher_pid   bigint,
    launcher_start bigint,
    pid            bigint,
    pid_start      bigint,
    pane_id        text,
    pane_pid       bigint,
    pane_start     bigint,
    started_at     text NOT NULL,
    last_seen_at   text,
    waiting        text,
    ended_at       text,
    end_reason     text,
    branch         text,
    idle_since     text,
    contacted_at   text,
    attention_ms   bigint CHECK (attention_ms IS NULL OR attention_ms >= 0),
    tty            text
);

CREATE INDEX sessions_live_by_host ON sessions (host) WHERE ended_at IS NULL;
CREATE INDEX sessions_by_name ON sessions (name);

CREATE TABLE claims (
    id         bigserial PRIMARY KEY,
    task_id    bigint NOT NULL REFERENCES tasks (id),
    session_id text NOT NULL REFERENCES sessions (id),
    generation bigint NOT NULL,
    granted_at text NOT NULL,
    expires_ms bigint NOT NULL,
    ended_at   text,
    -- 'done', 'release', 'expel', 'lapse', 'cancel', 'epoch'
    end_kind   text,
    end_reason text,
    -- false while a claim that ended without its holder asking was not reported to it yet.
    told       boolean NOT NULL DEFAULT false
);

-- At most one live claim per task, enforced by the store itself.
CREATE UNIQUE INDEX claims_live_per_task ON claims (task_id) WHERE ended_at IS NULL;
CREATE INDEX claims_live_by_session ON claims (session_id) WHERE ended_at IS NULL;
CREATE INDEX claims_live_by_expiry ON claims (expires_ms) WHERE ended_at IS NULL;
CREATE INDEX claims_by_task ON claims (task_id, generation);
CREATE INDEX claims_by_session ON claims (session_id, id);
CREATE INDEX claims_untold ON claims (session_id) WHERE NOT told AND ended_at IS NOT NULL;

CREATE TABLE notes (
    id         bigserial PRIMARY KEY,
    task_id    bigint NOT NULL REFERENCES tasks (id),
    author     text NOT NULL,
    generation bigint,
    text       text NOT NULL,
    at         text NOT NULL
);

CREATE INDEX notes_by_task ON notes (task_id);

-- Append-only: no UPDATE or DELETE ever touches it. Every write transaction takes the store's
-- write lock first (pg_advisory_xact_lock), so ids commit in id order: a reader on another host
-- that asks for `id > last` never misses a row that commits later with a lower id.
CREATE TABLE events (
    id         bigserial PRIMARY KEY,
    at         text NOT NULL,
    kind       text NOT NULL,
    task_id    bigint,
    session_id text,
    generation bigint,
    reason     text
);

CREATE INDEX events_by_task ON events (task_id);

CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only';
END
$$;

CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

-- A wake-up hint for the boards of other hosts, delivered at commit: the newest event id of
-- the statement. The events table stays the truth (a listener reads `id > last`).
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('board_events', (SELECT max(id) FROM inserted)::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER events_notify AFTER INSERT ON events
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION events_notify();

-- Answers to requests that carried an op_id, so a retry is not applied twice.
CREATE TABLE op_results (
    identity text NOT NULL,
    op_id    text NOT NULL,
    response text NOT NULL,
    at       text NOT NULL,
    PRIMARY KEY (identity, op_id)
);

-- Messages between agent sessions and operators.
CREATE TABLE messages (
    id        bigserial PRIMARY KEY,
    sender    text NOT NULL,
    recipient text NOT NULL,
    text      text NOT NULL,
    sent_at   text NOT NULL,
    read_at   text,
    answer    boolean NOT NULL DEFAULT false
);

CREATE INDEX messages_unread ON messages (recipient) WHERE read_at IS NULL;
