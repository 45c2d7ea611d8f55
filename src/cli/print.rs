//! Human-readable output of client commands. Agent text is untrusted: everything printed here
//! goes through [`crate::proto::sanitize`], so escape sequences show as text instead of acting.

use serde_json::Value;

use crate::proto::glossary::{ListState, TaskState};
use crate::proto::sanitize::one_line;
use crate::proto::Method;

/// A JSON value as one inert line of text for people (strings without their quotes).
pub use crate::proto::sanitize::value_line as s;

pub use crate::proto::countdown;

/// The task ids of a JSON array as people read them (`#3`, `#12`); empty for anything else.
fn task_refs(ids: &Value) -> Vec<String> {
    ids.as_array()
        .into_iter()
        .flatten()
        .map(|x| format!("#{x}"))
        .collect()
}

/// A commit id as people read it: its first 12 hex digits ("?" when none).
fn short_commit(v: &Value) -> String {
    v.as_str()
        .map_or("?".into(), |c| c.chars().take(12).collect())
}

/// One task as a line: `#12 [claimed by claude g3 1m52s] p1 title`.
pub fn task_line(t: &Value) -> String {
    let state = t["state"].as_str().unwrap_or("?");
    let status = match state.parse::<TaskState>() {
        Ok(TaskState::Claimed) => format!(
            "claimed by {} g{} {}",
            s(&t["holder"]),
            t["generation"],
            countdown(t["expires_in_ms"].as_i64().unwrap_or(0))
        ),
        Ok(TaskState::Open) if t["ready"].as_bool() == Some(false) => {
            format!("blocked by {}", task_refs(&t["blocked_by"]).join(" "))
        }
        Ok(TaskState::Open) => ListState::Ready.to_string(),
        Ok(TaskState::Done) => format!("done by {}", s(&t["done_by"])),
        Ok(TaskState::Review) => format!(
            "review of {} by {}",
            short_commit(&t["commit"]),
            s(&t["done_by"])
        ),
        Ok(TaskState::Cancelled) | Err(_) => state.to_string(),
    };
    let prio = t["priority"].as_i64().unwrap_or(0);
    let prio = if prio != 0 {
        format!(" p{prio}")
    } else {
        String::new()
    };
    format!(
        "#{:<4} [{status}]{prio} {}{}",
        t["id"],
        s(&t["title"]),
        assignment(t)
    )
}

/// Whom a task is for and its labels, as the end of its line: ` · for reviewer · labels ui,bug`
/// (empty when it has neither).
fn assignment(t: &Value) -> String {
    let mut out = String::new();
    if let Some(whom) = t["for"].as_str() {
        out.push_str(&format!(" · for {}", one_line(whom)));
    }
    let labels: Vec<String> = t["labels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(one_line)
        .collect();
    if !labels.is_empty() {
        out.push_str(&format!(" · labels {}", labels.join(",")));
    }
    out
}

/// Session id → the name people see, from an `agents` result with `all` (empty when that
/// could not be read: lines then show ids).
pub type Names = std::collections::HashMap<String, String>;

/// The names of the sessions of an `agents` result, as `board agents` shows them: `name`, or
/// `name@host` on a shared store (raw text: printers make it inert).
pub fn names_of(agents: &Value) -> Names {
    agents["agents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let name = a["name"].as_str()?;
            let shown = match a["host"].as_str() {
                Some(host) => format!("{name}@{host}"),
                None => name.to_string(),
            };
            Some((a["id"].as_str()?.into(), shown))
        })
        .collect()
}

/// The fields of an answer that name an agent session by its id: the holder and finisher of
/// its task (`show`) or tasks (`list`), the agent of its events, the author of its notes.
const AGENT_FIELDS: [(&str, &[&str]); 4] = [
    ("task", &["holder", "done_by"]),
    ("tasks", &["holder", "done_by"]),
    ("events", &["agent"]),
    ("notes", &["author"]),
];

/// Whether the answer `v` names any agent session by id: only then is it worth asking the
/// board for the sessions' names.
pub fn names_sessions(v: &Value) -> bool {
    AGENT_FIELDS.iter().any(|(list, keys)| {
        let items = match &v[*list] {
            Value::Array(a) => a.as_slice(),
            one @ Value::Object(_) => std::slice::from_ref(one),
            _ => &[],
        };
        items
            .iter()
            .any(|item| keys.iter().any(|k| item[*k].is_string()))
    })
}

/// Names every agent session of `AGENT_FIELDS` in the answer `v` as people know it (its
/// session's name; an id `names` lacks stays), for the human text: `--json` keeps the ids.
pub fn name_sessions(v: &mut Value, names: &Names) {
    for (list, keys) in AGENT_FIELDS {
        let items = match v.get_mut(list) {
            Some(Value::Array(a)) => a.as_mut_slice(),
            Some(one @ Value::Object(_)) => std::slice::from_mut(one),
            _ => continue,
        };
        for item in items {
            for k in keys {
                if let Some(name) = item[*k].as_str().and_then(|id| names.get(id)) {
                    item[*k] = Value::String(name.clone());
                }
            }
        }
    }
}

/// [`event_line`] with the agent named as people know it (its session's name, else its id).
pub fn event_line_named(e: &Value, names: &Names) -> String {
    let mut e = e.clone();
    if let Some(name) = e["agent"].as_str().and_then(|id| names.get(id)) {
        e["agent"] = Value::String(name.clone());
    }
    event_line(&e)
}

/// One event as a line: `2026-11-29T08:00:00.000Z  expel   #3 g2 claude: exited (status 3)`.
pub fn event_line(e: &Value) -> String {
    let mut out = format!("{}  {:<13}", s(&e["at"]), s(&e["kind"]));
    if let Some(t) = e["task"].as_i64() {
        out.push_str(&format!(" #{t}"));
    }
    if let Some(g) = e["generation"].as_i64() {
        out.push_str(&format!(" g{g}"));
    }
    if let Some(a) = e["agent"].as_str() {
        out.push_str(&format!(" {}", one_line(a)));
    }
    if let Some(r) = e["reason"].as_str() {
        out.push_str(&format!(": {}", one_line(r)));
    }
    out
}

fn tasks(v: &Value) -> String {
    let list = v["tasks"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return "no tasks".into();
    }
    list.iter().map(task_line).collect::<Vec<_>>().join("\n")
}

/// The events of a `log` answer `v`, one line each, agents named as people know them.
pub fn log_lines(v: &Value, names: &Names) -> String {
    v["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| event_line_named(e, names))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The human text for the result `v` of `method`.
pub fn human(method: Method, v: &Value) -> String {
    let base = human_result(method, v);
    match lost_lines(v) {
        Some(lost) => format!("{lost}\n{base}"),
        None => base,
    }
}

/// `lost` of an answer or error data (claims the agent lost since its previous call), one
/// line each: `lost #3 (generation 2): lapse — lease expired …`. None when there are none.
pub fn lost_lines(v: &Value) -> Option<String> {
    let lost = v["lost"].as_array().filter(|l| !l.is_empty())?;
    Some(
        lost.iter()
            .map(|l| {
                format!(
                    "lost #{} (generation {}): {} — {}",
                    l["task"],
                    l["generation"],
                    s(&l["end"]),
                    s(&l["reason"])
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

fn human_result(method: Method, v: &Value) -> String {
    match method {
        Method::Goal => match v["goal"].is_null() {
            true => "no goal set (set one with `board goal TEXT`)".into(),
            false => format!("goal: {}", s(&v["goal"]["text"])),
        },
        Method::Add => format!("added {}", task_line(&v["task"])),
        Method::Edit => format!("edited {}", task_line(&v["task"])),
        Method::Cancel => format!("cancelled {}", task_line(&v["task"])),
        Method::Reopen => format!("reopened {}", task_line(&v["task"])),
        Method::List | Method::Ready => tasks(v),
        Method::Show => show(v),
        Method::Claim => claim(v),
        Method::Done => done(v),
        Method::Accept => accept(v),
        Method::Reject => format!("rejected, back to ready: {}", task_line(&v["task"])),
        Method::Release => format!("released {}", task_line(&v["task"])),
        Method::Note => format!("noted on #{}", v["note"]["task"]),
        Method::Renew => renew(v),
        Method::Check => format!(
            "{} holds #{} at generation {} ({} left)",
            s(&v["holder"]),
            v["task"],
            v["generation"],
            countdown(v["expires_in_ms"].as_i64().unwrap_or(0))
        ),
        Method::Wait => format!(
            "asked: {} (open until a person answers it or you withdraw it with `board resume`; \
             the answer arrives in `board inbox`)",
            s(&v["waiting"])
        ),
        Method::Resume => {
            "resumed: your open question, if you had one, is withdrawn (`board log` shows it)"
                .into()
        }
        Method::Answer => format!(
            "answered {}'s question \"{}\" (message #{} in its inbox)",
            s(&v["message"]["to"]),
            s(&v["question"]),
            s(&v["message"]["id"])
        ),
        Method::Send => send(v),
        Method::Inbox => inbox(v),
        Method::Agents => agents(v),
        Method::AgentsPrune => prune(v),
        Method::Log => v["events"]
            .as_array()
            .into_iter()
            .flatten()
            .map(event_line)
            .collect::<Vec<_>>()
            .join("\n"),
        Method::Status => super::print_status::status(v),
        Method::Stop => format!("board (pid {}) stopped", v["pid"]),
        Method::SessionStop => format!(
            "stopping {} (pid {}): SIGTERM sent, SIGKILL in {:.1}s if it keeps running",
            s(&v["session"]),
            v["pid"],
            v["kill_after_ms"].as_f64().unwrap_or(0.0) / 1000.0
        ),
        // Not one-request commands (or printed by their own command): their JSON as it is.
        Method::Hello
        | Method::Activity
        | Method::Subscribe
        | Method::SessionRegister
        | Method::SessionAttach
        | Method::SessionExit
        | Method::Import
        | Method::Export => v.to_string(),
    }
}

/// `claim`: the task, its generation and the lease left (or that the caller holds it already).
fn claim(v: &Value) -> String {
    let what = match v["already"].as_bool() == Some(true) {
        true => "you already hold #",
        false => "claimed #",
    };
    let at = match v["already"].as_bool() == Some(true) {
        true => "at generation",
        false => "generation",
    };
    format!(
        "{what}{} {at} {} (lease {}): {}",
        v["task"]["id"],
        v["generation"],
        countdown(v["expires_in_ms"].as_i64().unwrap_or(0)),
        s(&v["task"]["title"])
    )
}

/// `agents prune`: how many ended sessions were forgotten.
fn prune(v: &Value) -> String {
    match v["pruned"].as_array().map_or(0, Vec::len) {
        0 => "no ended agent session to forget".into(),
        1 => "forgot 1 ended agent session (the event log keeps it)".into(),
        n => format!("forgot {n} ended agent sessions (the event log keeps them)"),
    }
}

/// `show`: the task's line, review override, commit, body, notes and history.
fn show(v: &Value) -> String {
    let t = &v["task"];
    let mut out = vec![task_line(t)];
    match t["review"].as_bool() {
        Some(true) => out.push("review: its done waits for a person (--review)".into()),
        Some(false) => out.push("review: its done skips review (--no-review)".into()),
        None => {}
    }
    if let Some(c) = t["commit"].as_str() {
        let landed = t["landed"].as_str().map_or(String::new(), |l| {
            format!(" · landed, base at {}", one_line(l))
        });
        out.push(format!("commit {}{landed}", one_line(c)));
    }
    if let Some(b) = t["body"].as_str().filter(|b| !b.is_empty()) {
        out.push(String::new());
        out.extend(b.lines().map(|l| format!("  {}", one_line(l))));
    }
    let notes = v["notes"].as_array().cloned().unwrap_or_default();
    if !notes.is_empty() {
        out.push("\nnotes:".into());
        for n in notes {
            out.push(format!(
                "  {} {}: {}",
                s(&n["at"]),
                s(&n["author"]),
                s(&n["text"])
            ));
        }
    }
    out.push("\nhistory:".into());
    for e in v["events"].as_array().into_iter().flatten() {
        out.push(format!("  {}", event_line(e)));
    }
    out.join("\n")
}

/// `done`: finished, waiting for review, landed, or already so.
fn done(v: &Value) -> String {
    let (id, generation) = (&v["task"]["id"], &v["generation"]);
    if v["already"].as_bool() == Some(true) {
        return match v["task"]["state"] == "review" {
            true => format!("#{id} already waits for review (generation {generation})"),
            false => format!("#{id} was already done (generation {generation})"),
        };
    }
    match v["task"]["state"].as_str() {
        // Said to the agent that finished it, which may not review its own work.
        Some("review") => format!(
            "#{id} waits for review at commit {} (generation {generation}): a person or another \
             agent accepts it (`board accept {id}`) or sends it back",
            short_commit(&v["task"]["commit"]),
        ),
        _ if !v["task"]["landed"].is_null() => format!(
            "done #{id} (generation {generation}); landed, base now at {}",
            short_commit(&v["task"]["landed"])
        ),
        _ => format!("done #{id} (generation {generation})"),
    }
}

/// `accept`: what landed where, or that the board lands nothing.
fn accept(v: &Value) -> String {
    match v["landed"].as_str() {
        Some(_) => format!(
            "accepted #{}: commit {} landed on {}, now at {}",
            v["task"]["id"],
            short_commit(&v["task"]["commit"]),
            s(&v["base"]),
            short_commit(&v["landed"])
        ),
        None => format!(
            "accepted #{} at commit {} (the board lands nothing: [git] land = \"none\")",
            v["task"]["id"],
            short_commit(&v["task"]["commit"])
        ),
    }
}

/// `renew`: one line per renewed claim.
fn renew(v: &Value) -> String {
    let claims = v["claims"].as_array().cloned().unwrap_or_default();
    if claims.is_empty() {
        "no live claims to renew".into()
    } else {
        claims
            .iter()
            .map(|c| {
                format!(
                    "renewed #{} g{} ({})",
                    c["task"],
                    c["generation"],
                    countdown(c["expires_in_ms"].as_i64().unwrap_or(0))
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `send`: the message's id and recipient.
fn send(v: &Value) -> String {
    let mut line = format!(
        "sent message #{} to {}",
        s(&v["message"]["id"]),
        s(&v["message"]["to"])
    );
    if v["ended_wait"] == serde_json::json!(true) {
        line.push_str(" (its wait for a human ended)");
    }
    line
}

/// `inbox`: one line per unread message or answer.
fn inbox(v: &Value) -> String {
    let list = v["messages"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return "no unread messages".into();
    }
    list.iter()
        .map(|m| {
            let kind = if m["answer"] == serde_json::json!(true) {
                "answer"
            } else {
                "message"
            };
            format!(
                "{kind} #{} from {} at {}: {}",
                s(&m["id"]),
                s(&m["from"]),
                s(&m["sent_at"]),
                s(&m["text"])
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `agents`: one line per agent session, then a hint about ended ones.
/// An agent as people see it: its name (the unique id only when it has none, and in the full
/// list); on a shared store `name@host`, since its host's board is the one watching it.
fn shown_agent_name(a: &Value) -> String {
    let name = a["name"].as_str().map_or_else(|| s(&a["id"]), one_line);
    match a["host"].as_str() {
        Some(h) => format!("{name}@{}", one_line(h)),
        None => name,
    }
}

fn agents(v: &Value) -> String {
    let list = v["agents"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return crate::cli::hints::agents_all(v).unwrap_or_else(|| "no agent sessions".into());
    }
    let name_width = list
        .iter()
        .map(|a| shown_agent_name(a).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(16, 28);
    let rows = list
        .iter()
        .map(|a| {
            let claims = task_refs(&a["claims"]);
            let shown = shown_agent_name(a);
            let mut line = format!(
                "{:<name_width$} {:<8} pid {:<8} claims {}",
                shown,
                s(&a["state"]),
                s(&a["pid"]),
                if claims.is_empty() {
                    "-".into()
                } else {
                    claims.join(" ")
                }
            );
            if v["all"] == serde_json::json!(true) {
                line.push_str(&format!("  id {}", s(&a["id"])));
            }
            match a["restarts"].as_i64() {
                Some(1) => line.push_str("  restarted once"),
                Some(n) if n > 1 => line.push_str(&format!("  restarted {n} times")),
                _ => {}
            }
            if a["branch"].is_string() {
                line.push_str(&format!("  branch {}", s(&a["branch"])));
            }
            if let Some(q) = a["question"].as_str() {
                line.push_str(&format!("  ASKS: {}", one_line(q)));
            }
            if let Some(q) = a["waiting"].as_str() {
                line.push_str(&format!("  WAITING: {}", one_line(q)));
            }
            if let Some(why) = a["attention"].as_str() {
                line.push_str(&format!("  NEEDS ATTENTION: {}", one_line(why)));
            }
            if let Some(r) = a["end_reason"].as_str() {
                line.push_str(&format!("  ended: {}", one_line(r)));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n");
    match crate::cli::hints::agents_all(v) {
        Some(hint) => format!("{rows}\n{hint}"),
        None => rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escape_sequences_in_titles_print_inert() {
        let t = json!({"id": 1, "state": "open", "ready": true, "priority": 0,
                       "title": "\u{1b}]0;pwned\u{7}\u{1b}[31mred"});
        let line = task_line(&t);
        assert!(!line.contains('\u{1b}'), "{line:?}");
        assert!(!line.contains('\u{7}'), "{line:?}");
    }

    #[test]
    fn task_lines_name_sessions_and_json_keeps_ids() {
        let agents = json!({"agents": [
            {"id": "w-2", "name": "w"},
            {"id": "ra-7", "name": "ra", "host": "alpha"},
        ]});
        let names = names_of(&agents);
        let open = json!({"tasks": [{"id": 1, "state": "open", "ready": true}]});
        assert!(!names_sessions(&open), "nothing to name: no request");
        let mut v = json!({"tasks": [
            {"id": 1, "state": "done", "done_by": "w-2", "title": "a"},
            {"id": 2, "state": "claimed", "holder": "ra-7", "generation": 3, "title": "b"},
            {"id": 3, "state": "done", "done_by": "gone-1", "title": "c"},
        ]});
        assert!(names_sessions(&v));
        name_sessions(&mut v, &names);
        let lines: Vec<String> = v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(task_line)
            .collect();
        assert!(lines[0].contains("[done by w]"), "{lines:?}");
        assert!(lines[1].contains("[claimed by ra@alpha g3"), "{lines:?}");
        assert!(
            lines[2].contains("[done by gone-1]"),
            "an unknown id stays: {lines:?}"
        );
    }

    #[test]
    fn countdowns_read_naturally() {
        assert_eq!(countdown(112_000), "1m52s");
        assert_eq!(countdown(900), "1s");
        assert_eq!(countdown(-5), "lapsing");
    }
}
