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
pub(super) fn list_all(json_out: bool, states: &[String]) -> i32 {
    use std::io::Write;
    let run = || -> BoardResult<()> {
        let target = client::target()?;
        let mut c = Client::connect(&target, true)?;
        let mut params = json!({ "limit": LIST_PAGE });
        if !states.is_empty() {
            params["state"] = json!(states);
        }
        let mut page = c.call("list", params.clone())?;
        let io = |e: std::io::Error| BoardError::internal(format!("writing the list: {e}"));
        let enc = |e: serde_json::Error| BoardError::internal(format!("writing the list: {e}"));
        let stdout = std::io::stdout();
        // JSON is printed only once complete, so an error on a later page still leaves exactly
        // one document (the error) on stdout; human lines are printed page by page.
        let mut tasks: Vec<u8> = Vec::with_capacity(64 * 1024);
        // The rest of each answer (`lost`, told once, on the first page) joins the document.
        let mut extra = serde_json::Map::new();
        let mut first = true;
        loop {
            if let Value::Object(m) = &mut page {
                for (k, v) in std::mem::take(m) {
                    match (k.as_str(), extra.get_mut(&k), v) {
                        ("tasks" | "next", _, v) => {
                            m.insert(k, v);
                        }
                        (_, Some(Value::Array(have)), Value::Array(more)) => have.extend(more),
                        (_, _, v) => {
                            extra.insert(k, v);
                        }
                    }
                }
            }
            if !json_out && first {
                if let Some(lost) = print::lost_lines(&Value::Object(extra.clone())) {
                    writeln!(tasks, "{lost}").map_err(io)?;
                }
            }
            for t in page["tasks"].as_array().into_iter().flatten() {
                if json_out {
                    if !first {
                        tasks.push(b',');
                    }
                    serde_json::to_writer(&mut tasks, t).map_err(enc)?;
                } else {
                    writeln!(tasks, "{}", print::task_line(t)).map_err(io)?;
                }
                first = false;
            }
            if !json_out {
                stdout.lock().write_all(&tasks).map_err(io)?;
                tasks.clear();
            }
            let Some(next) = page["next"].as_i64() else {
                break;
            };
            params["after"] = json!(next);
            page = c.call_raw("list", params.clone())?;
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
