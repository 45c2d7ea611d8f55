//! `board import FILE` and `board export`: a backlog as a file (see [`crate::proto::backlog`]).

use std::path::Path;

use serde_json::Value;

use crate::proto::backlog::{Backlog, Format};
use crate::proto::client::{self, answer_of};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::ImportResult;
use crate::proto::methods::{Call, NoParams, TaskId};

/// Reads `file` (`-`: stdin) as `format` (default: from the file's extension, else Markdown)
/// and imports it in one request. Errors: `usage` naming the file and the line or key that is
/// wrong; nothing is imported then.
pub fn import(file: &Path, format: Option<Format>) -> BoardResult<(Value, String)> {
    let shown = file.display();
    let text = if file == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| BoardError::usage(format!("reading stdin: {e}")))?
    } else {
        std::fs::read_to_string(file)
            .map_err(|e| BoardError::usage(format!("cannot read {shown}: {e}")))?
    };
    let format = format
        .or_else(|| Format::of_path(file))
        .unwrap_or(Format::Md);
    let backlog =
        Backlog::parse(&text, format).map_err(|e| BoardError::usage(format!("{shown}: {e}")))?;
    if backlog.tasks.is_empty() && backlog.goal.is_none() {
        return Err(BoardError::usage(format!(
            "{shown}: no tasks found (a Markdown task is a checklist item: `- [ ] title`)"
        )));
    }
    let v = client::send_once(&client::target()?, true, Call::Import(backlog))?;
    let imported = answer_of::<ImportResult>(v.clone())?.result;
    let ids: Vec<TaskId> = imported.tasks.iter().map(|t| t.id).collect();
    let mut human = match (ids.first(), ids.last()) {
        (Some(a), Some(b)) if a != b => format!("imported {} tasks: #{a}–#{b}", ids.len()),
        (Some(a), _) => format!("imported 1 task: #{a}"),
        _ => "imported no tasks".to_string(),
    };
    match (imported.goal_set, imported.replaced_goal) {
        (true, Some(old)) => human.push_str(&format!(
            "; goal set, replacing the previous goal \"{}\" (kept in the goal history)",
            crate::proto::sanitize::one_line(&old)
        )),
        (true, None) => human.push_str("; goal set"),
        _ => {}
    }
    Ok((v, human))
}

/// Prints the board's backlog in `format` (with `--json`: the JSON document of the call).
pub fn export(format: Format) -> BoardResult<(Value, String)> {
    let v = client::send_once(&client::target()?, true, Call::Export(NoParams {}))?;
    let backlog: Backlog = serde_json::from_value(v.clone())
        .map_err(|e| BoardError::internal(format!("the board's export is not a backlog: {e}")))?;
    let text = backlog.render(format);
    Ok((v, text.trim_end_matches('\n').to_string()))
}
