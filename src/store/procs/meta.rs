//! The board's own values (`meta`) and free-standing events.

use crate::proto::error::BoardResult;
use crate::store::db::{Backend, Db, Lock};
use crate::store::{EventKind, Events, Generation, TaskId};

pub(in crate::store) fn meta<B: Backend>(b: &B, key: &str) -> BoardResult<Option<String>> {
    b.read_with(|db| db.value("SELECT value FROM meta WHERE key = $1", &args![key]))
}

pub(in crate::store) fn set_meta<B: Backend>(b: &mut B, key: &str, value: &str) -> BoardResult<()> {
    b.write(Lock::Exclusive, |db, _| {
        db.exec(
            "INSERT INTO meta (key, value) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &args![key, value],
        )
    })?;
    Ok(())
}

pub(in crate::store) fn record<B: Backend>(
    b: &mut B,
    kind: EventKind,
    task: Option<TaskId>,
    agent: Option<&str>,
    generation: Option<Generation>,
    reason: &str,
) -> BoardResult<Events> {
    let ((), ev) = b.write(Lock::Shared, |db, ev| {
        db.emit(
            ev,
            kind,
            task.map(i64::from),
            agent,
            generation.map(i64::from),
            reason,
        )
    })?;
    Ok(ev)
}
