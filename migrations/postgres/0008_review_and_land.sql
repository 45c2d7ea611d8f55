-- board schema for the PostgreSQL store, version 8: done means landed (see the embedded store's
-- version 8).
-- tasks.state: gains 'review' (finished with a commit that waits for a person; no lease runs).
-- tasks.review: true = this task goes through review, false = it does not, NULL = as `[review]
--   required` says.
-- tasks.commit_sha: the commit the finishing holder named (full SHA), from its `done` on.
-- tasks.landed_sha: the base branch's head right after the board brought the commit in (NULL
--   until landed, and when the board lands nothing: `[git] land = "none"`).
ALTER TABLE tasks DROP CONSTRAINT tasks_state_check;
ALTER TABLE tasks ADD CONSTRAINT tasks_state_check
    CHECK (state IN ('open', 'claimed', 'done', 'cancelled', 'review'));
ALTER TABLE tasks ADD COLUMN review boolean;
ALTER TABLE tasks ADD COLUMN commit_sha text;
ALTER TABLE tasks ADD COLUMN landed_sha text;
