//! How a command ends when the board refused it or could not be asked: the error printed (JSON on
//! stdout with `--json`, words on stderr) and the exit code of its kind.

use serde_json::Value;

use super::print;

/// Prints `e` as the command's answer (its JSON on stdout with `--json`, else the claims it
/// says were lost and its message on stderr, made inert) and gives its exit code.
pub fn fail(json_out: bool, e: &crate::proto::error::BoardError) -> i32 {
    if json_out {
        println!("{}", e.to_json());
    } else {
        let data = Value::Object(e.data.clone());
        if let Some(lost) = print::lost_lines(&data) {
            eprintln!("board: {}", crate::proto::sanitize::inert(&lost));
        }
        eprintln!("board: {}", crate::proto::sanitize::inert(&e.message));
    }
    e.kind.exit_code()
}
