//! `board status` for people: the board, its store (the SQLite file, or the shared PostgreSQL
//! store with this host and every host session), its lease settings and its sessions.

use serde_json::Value;

use crate::proto::sanitize::{one_line, value_line as s};

/// `status`: the board, its store, its lease settings and sessions.
pub(super) fn status(v: &Value) -> String {
    let mut out = vec![
        format!(
            "board {} (pid {}, up {} s)",
            s(&v["name"]),
            v["pid"],
            v["uptime_s"]
        ),
        format!("socket   {}", s(&v["socket"])),
        format!("log      {}", s(&v["log"])),
        format!(
            "lease    {} ms, sweep {} ms, liveness {}",
            v["lease"]["duration_ms"],
            v["lease"]["sweep_ms"],
            s(&v["lease"]["liveness"])
        ),
        format!(
            "pidfd    {}",
            if v["pidfd"].as_bool() == Some(true) {
                "active"
            } else {
                "unavailable (sweep only)"
            }
        ),
        format!(
            "sessions {} live; {} unfinished tasks",
            v["live_sessions"], v["unfinished_tasks"]
        ),
    ];
    out.splice(2..2, store_lines(v));
    for a in v["agents"].as_array().into_iter().flatten() {
        if a["branch"].is_string() {
            out.push(format!(
                "agent    {} on branch {}",
                s(&a["id"]),
                s(&a["branch"])
            ));
        }
    }
    if let Some(e) = v["config_error"].as_str() {
        out.push(format!(
            "CONFIG ERROR (previous settings in force): {}",
            one_line(e)
        ));
    }
    out.join("\n")
}

/// `board status` lines about the store: the SQLite file; or the shared PostgreSQL store, this
/// host, whether the board reaches it, and every host session.
fn store_lines(v: &Value) -> Vec<String> {
    let st = &v["store"];
    if st["kind"] != "postgres" {
        return vec![format!("database {}", s(&v["db"]))];
    }
    let mut out = vec![format!(
        "store    postgres {} (this host: {})",
        s(&st["location"]),
        s(&st["host"])
    )];
    if let Some(why) = v["store_unreachable"].as_str() {
        out.push(format!(
            "STORE UNREACHABLE since {} (claims, done and check fail closed, exit 8): {}",
            s(&v["store_unreachable_since"]),
            one_line(why)
        ));
        let contact = match v["store_last_contact"].as_str() {
            Some(at) => format!("last reached at {at}"),
            None => "never reached since this board started".to_string(),
        };
        out.push(format!(
            "         {contact}; sessions, tasks and hosts below are as last known"
        ));
    }
    let hosts: Vec<&Value> = v["hosts"].as_array().into_iter().flatten().collect();
    let (ended, live): (Vec<&Value>, Vec<&Value>) =
        hosts.into_iter().partition(|h| h["ended_at"].is_string());
    for h in live {
        out.push(format!(
            "host     {} (pid {}): live, last heartbeat {} ms ago, expires in {} ms",
            s(&h["name"]),
            h["pid"],
            h["beat_age_ms"],
            h["expires_in_ms"]
        ));
    }
    out.extend(ended_hosts_line(&ended));
    out
}

/// Ended host sessions pile up over restarts: one line with their count and the newest few
/// (`--json` has them all).
fn ended_hosts_line(ended: &[&Value]) -> Option<String> {
    const SHOWN: usize = 3;
    let newest: Vec<String> = ended
        .iter()
        .rev()
        .take(SHOWN)
        .map(|h| format!("{} ({})", s(&h["name"]), s(&h["end_reason"])))
        .collect();
    let more = if ended.len() > SHOWN { ", …" } else { "" };
    (!ended.is_empty()).then(|| {
        format!(
            "ended    {} host session(s), newest: {}{more}",
            ended.len(),
            newest.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ended_hosts_are_one_line_with_the_newest_three() {
        let v = json!({"store": {"kind": "postgres", "location": "db/board", "host": "a"},
            "hosts": [
                {"name": "a", "pid": 1, "ended_at": null, "beat_age_ms": 10, "expires_in_ms": 900},
                {"name": "b", "pid": 2, "ended_at": "t1", "end_reason": "stopped"},
                {"name": "c", "pid": 3, "ended_at": "t2", "end_reason": "lost"},
                {"name": "d", "pid": 4, "ended_at": "t3", "end_reason": "lost"},
                {"name": "e", "pid": 5, "ended_at": "t4", "end_reason": "lost"}]});
        let lines = store_lines(&v);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines[1].starts_with("host     a (pid 1): live"),
            "{lines:?}"
        );
        assert_eq!(
            lines[2],
            "ended    4 host session(s), newest: e (lost); d (lost); c (lost), …"
        );
    }
}
