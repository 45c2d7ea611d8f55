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

-- The task object of the one-round-trip answers carries the commit and the land too.
CREATE OR REPLACE FUNCTION board_task_json(p_task bigint) RETURNS json
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN (
        SELECT json_build_object(
                   'id', t.id, 'title', t.title, 'body', t.body, 'priority', t.priority,
                   'state', t.state, 'generation', t.generation,
                   'after', to_json(ARRAY(SELECT d.after_id FROM task_deps d
                                          WHERE d.task_id = t.id ORDER BY d.after_id)),
                   'blocked_by', to_json(ARRAY(
                       SELECT d.after_id FROM task_deps d JOIN tasks a ON a.id = d.after_id
                       WHERE d.task_id = t.id AND a.state NOT IN ('done', 'cancelled')
                       ORDER BY d.after_id)),
                   'ready', t.state = 'open' AND NOT EXISTS (
                       SELECT 1 FROM task_deps d JOIN tasks a ON a.id = d.after_id
                       WHERE d.task_id = t.id AND a.state NOT IN ('done', 'cancelled')),
                   'holder', c.session_id, 'expires_in_ms', c.expires_ms - board_now_ms(),
                   'created_at', t.created_at, 'updated_at', t.updated_at,
                   'done_by', t.done_by, 'done_at', t.done_at,
                   'commit', t.commit_sha, 'landed', t.landed_sha)
          FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL
         WHERE t.id = p_task);
END
$$;
