-- board schema, version 8: done means landed. A holder's `done` may put its task in review with
-- the commit it names; an accept lands that commit into the base branch.
-- tasks.state: gains 'review' (finished with a commit that waits for a person; no lease runs).
-- tasks.review: 1 = this task goes through review, 0 = it does not, NULL = as `[review]
--   required` says.
-- tasks.commit_sha: the commit the finishing holder named (full SHA), from its `done` on.
-- tasks.landed_sha: the base branch's head right after the board brought the commit in (NULL
--   until landed, and when the board lands nothing: `[git] land = "none"`).
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt, with foreign keys off
-- (the store turns them off while it migrates, and checks them all before this commits).

CREATE TABLE tasks_v8 (
    id              INTEGER PRIMARY KEY,
    title           TEXT NOT NULL,
    body            TEXT NOT NULL DEFAULT '',
    priority        INTEGER NOT NULL DEFAULT 0,
    state           TEXT NOT NULL DEFAULT 'open'
                    CHECK (state IN ('open', 'claimed', 'done', 'cancelled', 'review')),
    -- The fencing token: incremented in the transaction that grants a claim, never decreased.
    generation      INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    done_by         TEXT,
    done_generation INTEGER,
    done_at         TEXT,
    review          INTEGER CHECK (review IN (0, 1)),
    commit_sha      TEXT,
    landed_sha      TEXT
) STRICT;

INSERT INTO tasks_v8 (id, title, body, priority, state, generation, created_at, updated_at,
                      done_by, done_generation, done_at)
SELECT id, title, body, priority, state, generation, created_at, updated_at,
       done_by, done_generation, done_at
  FROM tasks;

DROP TABLE tasks;
ALTER TABLE tasks_v8 RENAME TO tasks;
CREATE INDEX tasks_by_state ON tasks (state, priority DESC, id);
