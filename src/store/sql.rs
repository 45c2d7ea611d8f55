//! SQL fragments shared by several statements, written once: what "ready", "finished" and a
//! "live and unexpired" claim mean. Macros, so every statement stays one `&'static str` that
//! `prepare_cached` keys on; the spellings of states and ends come from
//! [`crate::proto::glossary`].

/// The finished states, as an SQL list: `('done', 'cancelled')`.
macro_rules! finished {
    () => {
        concat!(
            "(",
            $crate::sql_state!(done),
            ", ",
            $crate::sql_state!(cancelled),
            ")"
        )
    };
}

/// The unfinished states, as an SQL list: `('open', 'claimed')`.
macro_rules! unfinished {
    () => {
        concat!(
            "(",
            $crate::sql_state!(open),
            ", ",
            $crate::sql_state!(claimed),
            ")"
        )
    };
}

/// Task `$t` is ready: open, and every task it waits for is finished.
macro_rules! ready {
    ($t:literal) => {
        concat!(
            $t, ".state = ", $crate::sql_state!(open),
            " AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks a ON a.id = d.after_id WHERE d.task_id = ",
            $t, ".id AND a.state NOT IN ", finished!(), ")"
        )
    };
}

/// Task `$t` may go to agent session `$agent` (a parameter such as `"?2"`): it is meant for no
/// one, or for that session's name or role.
macro_rules! meant_for_ok {
    ($t:literal, $agent:literal) => {
        concat!(
            "(",
            $t,
            ".meant_for IS NULL OR EXISTS (SELECT 1 FROM sessions m WHERE m.id = ",
            $agent,
            " AND (m.name = ",
            $t,
            ".meant_for OR m.role = ",
            $t,
            ".meant_for)))"
        )
    };
}

/// A claim (columns of `claims`, unqualified) is live and unexpired at lease-clock time `$now`
/// (a parameter such as `"?3"`): not ended, and its expiry is still ahead (expiry is exclusive).
macro_rules! live_unexpired {
    ($now:literal) => {
        concat!("ended_at IS NULL AND expires_ms > ", $now)
    };
}

/// A claim is live but expired at `$now`: due to lapse.
macro_rules! live_expired {
    ($now:literal) => {
        concat!("ended_at IS NULL AND expires_ms <= ", $now)
    };
}
