-- board schema for the PostgreSQL store, version 10: a task's own review override.
-- tasks.review (version 8) is now set by `add/edit --review | --no-review` and read by `done`.
-- board_task_json is replaced whole: the task's JSON of the one-round-trip claim and done
-- carries `review` like every other answer.
-- board_done_at_once is replaced whole: it leaves a task that goes through review
-- (tasks.review true) to the general path, which puts it in review with a commit.
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
                   'for', t.meant_for, 'review', t.review)
          FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL
         WHERE t.id = p_task);
END
$$;

CREATE OR REPLACE FUNCTION board_done_at_once(p_identity text, p_op text, p_agent text, p_task bigint,
                                   p_generation bigint, p_lock bigint)
RETURNS TABLE (out_saved text, out_event_id bigint, out_event_at text, out_generation bigint,
               out_lost boolean, out_unread text[])
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    SELECT r.response INTO out_saved FROM op_results r
    WHERE r.identity = p_identity AND r.op_id = p_op;
    IF NOT FOUND THEN
        PERFORM pg_advisory_xact_lock_shared(p_lock);
        IF EXISTS (SELECT 1 FROM tasks t WHERE t.id = p_task AND t.review) THEN
            RETURN;
        END IF;
        PERFORM pg_current_xact_id();
        UPDATE claims SET ended_at = board_wall(), end_kind = 'done', end_reason = 'done',
                          told = true
         WHERE task_id = p_task AND session_id = p_agent
           AND ended_at IS NULL AND expires_ms > board_now_ms()
           AND (p_generation IS NULL OR generation = p_generation)
        RETURNING generation INTO out_generation;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        UPDATE tasks SET state = 'done', done_by = p_agent, done_generation = out_generation,
                         done_at = board_wall(), updated_at = board_wall()
         WHERE id = p_task AND state = 'claimed';
        INSERT INTO events (at, kind, task_id, session_id, generation, reason)
        VALUES (board_wall(), 'done', p_task, p_agent, out_generation, 'done')
        RETURNING id, at INTO out_event_id, out_event_at;
        out_saved := json_build_object('result', json_build_object(
                         'task', board_task_json(p_task),
                         'generation', out_generation,
                         'already', false))::text;
        INSERT INTO op_results (identity, op_id, response, at)
        VALUES (p_identity, p_op, out_saved, board_wall());
    END IF;
    out_lost := EXISTS (SELECT 1 FROM claims l
                        WHERE l.session_id = p_agent AND NOT l.told AND l.ended_at IS NOT NULL);
    out_unread := ARRAY(SELECT m.sender FROM messages m
                        WHERE m.recipient = p_agent AND m.read_at IS NULL ORDER BY m.id);
    RETURN NEXT;
END
$$;
