-- board schema for the PostgreSQL store, version 4: an agent's `done` (without a note) as a
-- server function too, so it costs the board one round trip to the server like a claim of the
-- best ready task (version 2); the task's JSON made by one function for both; the grant of
-- the best ready task in PL/pgSQL instead of SQL. Every function of version 2 is replaced
-- whole, so this file is what they are.

-- The grant of the best ready task to agent session p_agent for p_lease ms, in one conditional
-- statement: the task row is picked with FOR UPDATE SKIP LOCKED (a task another transaction is
-- granting is passed over), its generation incremented (lifted above the floor a new epoch
-- set first), the claim row and the `grant` event inserted. No row: nothing was ready, or the
-- session has ended; nothing changed. The grant of a named task is in src/store/pg/claims.rs.
-- PL/pgSQL rather than SQL: a session plans the statement once and keeps the plan, where an
-- SQL function with a data-modifying WITH is planned again on every call (~1 ms here).
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

-- A task as the board shows it (the `task` object of the wire format, src/proto/views.rs), with
-- its dependencies and live claim; NULL for no such task.
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
                   'done_by', t.done_by, 'done_at', t.done_at)
          FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL
         WHERE t.id = p_task);
END
$$;

-- One agent request `claim` (best ready task) with op_id p_op, as one statement and so one
-- transaction: the saved answer of an earlier attempt with this op_id, or the write lock
-- (shared, key p_lock, then the transaction id: the event frontier relies on that order), the
-- grant, and its answer (the `claim` result the board sends, as {"result": …}) saved under the
-- op_id. Each statement inside takes its own snapshot (a volatile function under READ
-- COMMITTED), so the grant sees every write committed before the lock was granted.
-- Also answered: whether the agent has lost claims it was not told of yet, and the senders of
-- its unread messages (what the board adds to every answer), so those cost no round trip.
-- No row: nothing was granted and nothing saved; the board then runs the claim the general way,
-- which explains the refusal. Two attempts racing with one op_id: the second fails on the
-- primary key of op_results, rolls back and runs again, finding the first one's answer.
CREATE OR REPLACE FUNCTION board_claim_next(p_identity text, p_op text, p_agent text, p_lease bigint,
                                 p_lock bigint)
RETURNS TABLE (out_saved text, out_event_id bigint, out_event_at text, out_task bigint,
               out_generation bigint, out_lost boolean, out_unread text[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    g record;
BEGIN
    SELECT r.response INTO out_saved FROM op_results r
    WHERE r.identity = p_identity AND r.op_id = p_op;
    IF NOT FOUND THEN
        PERFORM pg_advisory_xact_lock_shared(p_lock);
        PERFORM pg_current_xact_id();
        SELECT * INTO g FROM board_grant_next(p_agent, p_lease);
        IF NOT FOUND THEN
            RETURN;
        END IF;
        out_event_id := g.event_id;
        out_event_at := g.event_at;
        out_task := g.granted_task;
        out_generation := g.granted_generation;
        out_saved := json_build_object('result', json_build_object(
                         'task', board_task_json(g.granted_task),
                         'generation', g.granted_generation,
                         'expires_in_ms', g.granted_expires_ms - board_now_ms(),
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

-- One agent request `done` (without a note) with op_id p_op, as one statement, like
-- board_claim_next: the saved answer of an earlier attempt, or the write lock (shared), the end
-- of the caller's live, unexpired claim on p_task (at p_generation when given), the task done,
-- the `done` event, and the answer (the `done` result) saved under the op_id. No row: the
-- caller holds no such claim and nothing changed; the board then runs `done` the general way,
-- which answers a repeated `done` or explains the refusal (lapsing the caller's expired claim).
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
