//! `board list` without `--limit`: the whole backlog, page by page.

use std::io::Write;

use serde_json::{Map, Value};

use super::exit::fail;
use super::print;
use crate::proto::client::{self, Client};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::glossary::ListState;
use crate::proto::methods::{Call, ListParams, StateFilter, TaskId};

/// Tasks per request when `board list` pages through the whole backlog.
pub(super) const LIST_PAGE: i64 = 1000;

/// `board list` without `--limit`: pages through the backlog with the `after` cursor on one
/// connection and prints each page as it arrives (agent sessions named as people know them, as
/// `board log` does), so neither the board nor this process holds the whole backlog as one
/// document. With `--json` the output is still one document, `{"tasks":[…]}`, as the result
/// of an unpaged `list` call would be. Tasks added or changed while paging may or may not be
/// shown; none is shown twice.
pub(super) fn list_all(json_out: bool, states: &[ListState], label: Option<&str>) -> i32 {
    let params = ListParams {
        state: (!states.is_empty()).then(|| StateFilter::Many(states.to_vec())),
        limit: Some(LIST_PAGE),
        after: None,
        label: label.map(String::from),
    };
    match page_through(json_out, params) {
        Ok(()) => 0,
        Err(e) => fail(json_out, &e),
    }
}

fn io(e: std::io::Error) -> BoardError {
    BoardError::internal(format!("writing the list: {e}"))
}

fn enc(e: serde_json::Error) -> BoardError {
    BoardError::internal(format!("writing the list: {e}"))
}

/// Asks for every page of `params` in turn (`after` moved to each answer's `next`) and prints
/// them.
fn page_through(json_out: bool, mut params: ListParams) -> BoardResult<()> {
    let target = client::target()?;
    let mut c = Client::connect(&target, true)?;
    let mut pages = Pages {
        json_out,
        tasks: Vec::with_capacity(64 * 1024),
        extra: Map::new(),
        first: true,
        names: None,
        target: &target,
    };
    let mut line = c.send_line(Call::List(params.clone()), true)?;
    while let Some(next) = pages.take(&line)? {
        params.after = Some(next);
        line = c.send_line(Call::List(params.clone()), false)?;
    }
    pages.finish()
}

/// The pages read so far.
///
/// JSON is printed only once complete, so an error on a later page still leaves exactly one
/// document (the error) on stdout; human lines are printed page by page. With --json each
/// page's `tasks` array is copied as the board wrote it, never parsed: parsing and re-printing
/// 10 000 tasks was most of this command's time.
struct Pages<'a> {
    json_out: bool,
    /// With --json, the tasks' objects so far, comma-separated; else the lines of this page.
    tasks: Vec<u8>,
    /// The rest of each answer (`lost`, told once, on the first page) joins the document.
    extra: Map<String, Value>,
    /// No task seen yet.
    first: bool,
    /// The sessions' names, asked once, when the first task line that names one is printed.
    names: Option<print::Names>,
    /// The board, to ask for those names.
    target: &'a client::Target,
}

impl Pages<'_> {
    /// Takes in one answer line; returns its `next` cursor (None on the last page).
    fn take(&mut self, line: &str) -> BoardResult<Option<TaskId>> {
        let page = client::split_answer(line)?;
        let mut next = None;
        let mut page_tasks = None;
        for (k, raw) in page {
            match k {
                "tasks" => page_tasks = Some(raw),
                "next" => next = serde_json::from_str::<Option<TaskId>>(raw.get()).map_err(enc)?,
                _ => {
                    let v: Value = serde_json::from_str(raw.get()).map_err(enc)?;
                    match (self.extra.get_mut(k), v) {
                        (Some(Value::Array(have)), Value::Array(more)) => have.extend(more),
                        (_, v) => {
                            self.extra.insert(k.to_string(), v);
                        }
                    }
                }
            }
        }
        if !self.json_out && self.first {
            if let Some(lost) = print::lost_lines(&Value::Object(self.extra.clone())) {
                writeln!(self.tasks, "{lost}").map_err(io)?;
            }
        }
        let raw = page_tasks.map_or("[]", |r| r.get()).trim();
        match self.json_out {
            true => self.copy_tasks(raw)?,
            false => self.print_tasks(raw)?,
        }
        Ok(next)
    }

    /// With --json: the page's task objects, as the board wrote them, added to the document.
    fn copy_tasks(&mut self, raw: &str) -> BoardResult<()> {
        let inner = raw
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .map(str::trim)
            .ok_or_else(|| BoardError::internal("the board sent `tasks` that is not a list"))?;
        if !inner.is_empty() {
            if !self.first {
                self.tasks.push(b',');
            }
            self.tasks.extend_from_slice(inner.as_bytes());
            self.first = false;
        }
        Ok(())
    }

    /// Without --json: the page's tasks printed, one line each.
    fn print_tasks(&mut self, raw: &str) -> BoardResult<()> {
        let page: Value = serde_json::from_str(raw).map_err(enc)?;
        let mut page = serde_json::json!({ "tasks": page });
        if print::names_sessions(&page) {
            let names = self
                .names
                .get_or_insert_with(|| super::call::session_names(self.target));
            print::name_sessions(&mut page, names);
        }
        for t in page["tasks"].as_array().into_iter().flatten() {
            writeln!(self.tasks, "{}", print::task_line(t)).map_err(io)?;
            self.first = false;
        }
        std::io::stdout()
            .lock()
            .write_all(&self.tasks)
            .map_err(io)?;
        self.tasks.clear();
        Ok(())
    }

    /// After the last page: the one JSON document, or `no tasks` when none was printed.
    fn finish(mut self) -> BoardResult<()> {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        if self.json_out {
            // Keys in sorted order, as the board prints one unpaged answer.
            self.extra.insert("tasks".into(), Value::Null);
            out.write_all(b"{").map_err(io)?;
            for (i, (k, v)) in self.extra.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",").map_err(io)?;
                }
                serde_json::to_writer(&mut out, k).map_err(enc)?;
                out.write_all(b":").map_err(io)?;
                if k == "tasks" {
                    out.write_all(b"[").map_err(io)?;
                    out.write_all(&self.tasks).map_err(io)?;
                    out.write_all(b"]").map_err(io)?;
                } else {
                    serde_json::to_writer(&mut out, v).map_err(enc)?;
                }
            }
            out.write_all(b"}\n").map_err(io)?;
        } else if self.first {
            out.write_all(b"no tasks\n").map_err(io)?;
        }
        out.flush().map_err(io)
    }
}
