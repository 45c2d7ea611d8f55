-- board schema for the PostgreSQL store, version 9: labels and assignment (see the embedded
-- store's version 9).
-- tasks.labels: the task's labels joined by commas ('' for none).
-- tasks.meant_for: the agent name or role the task is for (NULL: any agent).
-- sessions.role: the role the agent session was started with, NULL for none.
-- board_grant_next is replaced whole: it passes over a task meant for another agent name or
-- role, so the one-round-trip claim of the best ready task honours `meant_for` like the
-- general path.
ALTER TABLE tasks ADD COLUMN labels text NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN meant_for text;
ALTER TABLE sessions ADD COLUMN role text;

CREATE OR REPLACE FUNCTION board_grant_next(p_agent text, p_lease bigint)
RETURNS TABLE (granted_task bigint, granted_generation bigint, granted_expires_ms bigint,
               event_id bigint, event_at text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN QUERY
    WITH g AS (
        UPDATE tasks SET state = 'claimed', updated_at = board_wall(),
            generation = GREATEST(generation,
                COALESCE((SELECT MAX(value::bigint) FROM meta WHERE key = 'generation_floor'), 0)) + 1
        WHERE id = (
            SELECT t.id FROM tasks t
            WHERE t.state = 'open'
              AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks a ON a.id = d.after_id
                              WHERE d.task_id = t.id AND a.state NOT IN ('done', 'cancelled'))
              AND (t.meant_for IS NULL
                   OR EXISTS (SELECT 1 FROM sessions m WHERE m.id = p_agent
                                AND (m.name = t.meant_for OR m.role = t.meant_for)))
            ORDER BY t.priority DESC, t.id ASC LIMIT 1 FOR UPDATE SKIP LOCKED)
          AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = p_agent AND s.ended_at IS NULL)
        RETURNING id, generation),
    c AS (
        INSERT INTO claims (task_id, session_id, generation, granted_at, expires_ms)
        SELECT id, p_agent, generation, board_wall(), board_now_ms() + p_lease FROM g
        RETURNING task_id, generation, expires_ms),
    e AS (
        INSERT INTO events (at, kind, task_id, session_id, generation, reason)
        SELECT board_wall(), 'grant', task_id, p_agent, generation, 'claimed' FROM c
        RETURNING id, at)
    SELECT c.task_id, c.generation, c.expires_ms, e.id, e.at FROM c, e;
END
$$;

-- The task's JSON of the one-round-trip claim and done, replaced whole: it carries the labels,
-- whom the task is for, and the commit and landed head of version 8, like every other answer.
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
                   'commit', t.commit_sha, 'landed', t.landed_sha,
                   'labels', to_json(COALESCE(string_to_array(NULLIF(t.labels, ''), ','),
                                              ARRAY[]::text[])),
                   'for', t.meant_for)
          FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL
         WHERE t.id = p_task);
END
$$;
