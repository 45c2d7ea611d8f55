//! `board list` without `--limit`: the whole backlog, page by page.

use serde_json::{json, Value};

use super::{fail, print};
use crate::proto::client::{self, Client};
use crate::proto::error::{BoardError, BoardResult};

/// Tasks per request when `board list` pages through the whole backlog.
pub(super) const LIST_PAGE: i64 = 1000;

/// `board list` without `--limit`: pages through the backlog with the `after` cursor on one
/// connection and prints each page as it arrives, so neither the board nor this process holds
/// the whole backlog as one document. With `--json` the output is still one document,
/// `{"tasks":[…]}`, as the result of an unpaged `list` call would be. Tasks added or changed
/// while paging may or may not be shown; none is shown twice.
pub(super) fn list_all(
    json_out: bool,
    states: &[crate::proto::glossary::ListState],
    label: Option<&str>,
) -> i32 {
    use std::io::Write;
    let run = || -> BoardResult<()> {
        let target = client::target()?;
        let mut c = Client::connect(&target, true)?;
        let mut params = json!({ "limit": LIST_PAGE });
        if !states.is_empty() {
            params["state"] = json!(states);
        }
        if let Some(label) = label {
            params["label"] = json!(label);
        }
        let io = |e: std::io::Error| BoardError::internal(format!("writing the list: {e}"));
        let enc = |e: serde_json::Error| BoardError::internal(format!("writing the list: {e}"));
        let stdout = std::io::stdout();
        // JSON is printed only once complete, so an error on a later page still leaves exactly
        // one document (the error) on stdout; human lines are printed page by page. With --json
        // each page's `tasks` array is copied as the board wrote it, never parsed: parsing and
        // re-printing 10 000 tasks was most of this command's time.
        let mut tasks: Vec<u8> = Vec::with_capacity(64 * 1024);
        // The rest of each answer (`lost`, told once, on the first page) joins the document.
        let mut extra = serde_json::Map::new();
        let mut first = true;
        let mut line = c.call_line("list", params.clone(), true)?;
        loop {
            let page = client::split_answer(&line)?;
            let mut next = None;
            let mut page_tasks = None;
            for (k, raw) in page {
                match k {
                    "tasks" => page_tasks = Some(raw),
                    "next" => next = serde_json::from_str::<Option<i64>>(raw.get()).map_err(enc)?,
                    _ => {
                        let v: Value = serde_json::from_str(raw.get()).map_err(enc)?;
                        match (extra.get_mut(k), v) {
                            (Some(Value::Array(have)), Value::Array(more)) => have.extend(more),
                            (_, v) => {
                                extra.insert(k.to_string(), v);
                            }
                        }
                    }
                }
            }
            if !json_out && first {
                if let Some(lost) = print::lost_lines(&Value::Object(extra.clone())) {
                    writeln!(tasks, "{lost}").map_err(io)?;
                }
            }
            let raw = page_tasks.map_or("[]", |r| r.get()).trim();
            if json_out {
                let inner = raw
                    .strip_prefix('[')
                    .and_then(|r| r.strip_suffix(']'))
                    .map(str::trim)
                    .ok_or_else(|| {
                        BoardError::internal("the board sent `tasks` that is not a list")
                    })?;
                if !inner.is_empty() {
                    if !first {
                        tasks.push(b',');
                    }
                    tasks.extend_from_slice(inner.as_bytes());
                    first = false;
                }
            } else {
                let page: Vec<Value> = serde_json::from_str(raw).map_err(enc)?;
                for t in &page {
                    writeln!(tasks, "{}", print::task_line(t)).map_err(io)?;
                    first = false;
                }
                stdout.lock().write_all(&tasks).map_err(io)?;
                tasks.clear();
            }
            let Some(next) = next else {
                break;
            };
            params["after"] = json!(next);
            line = c.call_line("list", params.clone(), false)?;
        }
        let mut out = stdout.lock();
        if json_out {
            // Keys in sorted order, as the board prints one unpaged answer.
            extra.insert("tasks".into(), Value::Null);
            out.write_all(b"{").map_err(io)?;
            for (i, (k, v)) in extra.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",").map_err(io)?;
                }
                serde_json::to_writer(&mut out, k).map_err(enc)?;
                out.write_all(b":").map_err(io)?;
                if k == "tasks" {
                    out.write_all(b"[").map_err(io)?;
                    out.write_all(&tasks).map_err(io)?;
                    out.write_all(b"]").map_err(io)?;
                } else {
                    serde_json::to_writer(&mut out, v).map_err(enc)?;
                }
            }
            out.write_all(b"}\n").map_err(io)?;
        } else if first {
            out.write_all(b"no tasks\n").map_err(io)?;
        }
        out.flush().map_err(io)
    };
    match run() {
        Ok(()) => 0,
        Err(e) => fail(json_out, &e),
    }
}
