//! The scripted turn, the same for every vendor: a list of [`Step`]s, the next one chosen by how
//! many tool results the conversation already holds (a model sees the whole conversation on
//! every request). Ids and generations are read from the tool results, never assumed: a step
//! that needs the claim's id reads it from the result of the claim before it.
//!
//! The standard turn ([`STANDARD`]): claim through the board's MCP tool, `echo done > work.txt`
//! in the CLI's own shell tool, `board done ID --generation G` in that shell with the id and
//! generation from the claim's answer, claim again through MCP, finish that one through MCP,
//! then a closing sentence.

use serde_json::{json, Value};

/// One step of a scripted turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The board MCP tool `board_claim` with no arguments (the best ready task).
    ClaimMcp,
    /// `board claim --json` in the CLI's shell tool (for a CLI without MCP).
    ClaimShell,
    /// A shell command, as is.
    Shell(&'static str),
    /// `board done ID --generation G` in the shell, for the latest claim read so far.
    DoneShell,
    /// The board MCP tool `board_done` for the latest claim read so far.
    DoneMcp,
}

/// The standard turn.
pub const STANDARD: &[Step] = &[
    Step::ClaimMcp,
    Step::Shell("echo done > work.txt"),
    Step::DoneShell,
    Step::ClaimMcp,
    Step::DoneMcp,
];

/// The turn of a CLI without MCP (aider): every step in its shell, the claims read from
/// `board claim --json`'s output.
pub const SHELL_ONLY: &[Step] = &[
    Step::ClaimShell,
    Step::Shell("echo done > work.txt"),
    Step::DoneShell,
    Step::ClaimShell,
    Step::DoneShell,
];

/// What the model does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Call the board MCP server's tool `tool` (unprefixed, e.g. `board_claim`) with `args`.
    Mcp {
        /// The board tool's own name.
        tool: &'static str,
        /// Its arguments.
        args: Value,
    },
    /// Run `command` in the CLI's shell tool.
    Shell(String),
    /// End the turn with this text.
    Finish(String),
}

/// The action after `results` (the text of every tool result so far, in order) in `script`.
/// A step that needs a claim none of the results holds ends the turn saying so (the test then
/// fails on the board's state, with the requests in its message).
pub fn next(script: &[Step], results: &[String]) -> Action {
    let Some(step) = script.get(results.len()) else {
        return Action::Finish("Both tasks are done.".into());
    };
    let claim = || results.iter().rev().find_map(|r| find_claim(r));
    match step {
        Step::ClaimMcp => Action::Mcp {
            tool: "board_claim",
            args: json!({}),
        },
        Step::ClaimShell => Action::Shell("board claim --json".into()),
        Step::Shell(c) => Action::Shell((*c).into()),
        Step::DoneShell => match claim() {
            Some((id, g)) => Action::Shell(format!("board done {id} --generation {g}")),
            None => no_claim(results),
        },
        Step::DoneMcp => match claim() {
            Some((task, generation)) => Action::Mcp {
                tool: "board_done",
                args: json!({"task": task, "generation": generation}),
            },
            None => no_claim(results),
        },
    }
}

fn no_claim(results: &[String]) -> Action {
    Action::Finish(format!(
        "I could not read a claim from the tool results: {results:?}"
    ))
}

/// The (task id, generation) of a claim's answer found anywhere in `text`: the answer itself,
/// or wrapped by the CLI (JSON inside a JSON string, MCP `content` blocks, a line of output).
pub fn find_claim(text: &str) -> Option<(i64, i64)> {
    for (i, _) in text.match_indices('{') {
        let mut values = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = values.next() {
            if let Some(c) = claim_in(&v) {
                return Some(c);
            }
        }
    }
    None
}

fn claim_in(v: &Value) -> Option<(i64, i64)> {
    match v {
        Value::Object(m) => {
            if let (Some(id), Some(g)) = (
                m.get("task")
                    .and_then(|t| t.get("id"))
                    .and_then(Value::as_i64),
                m.get("generation").and_then(Value::as_i64),
            ) {
                return Some((id, g));
            }
            m.values().find_map(claim_in)
        }
        Value::Array(a) => a.iter().find_map(claim_in),
        Value::String(s) => find_claim(s),
        _ => None,
    }
}

#[test]
fn the_standard_turn_reads_each_claim_from_the_result_before_it() {
    let claim = |id: i64, g: i64| {
        json!({"task": {"id": id, "title": "t"}, "generation": g, "expires_in_ms": 1, "already": false})
            .to_string()
    };
    let mut results = vec![];
    assert_eq!(
        next(STANDARD, &results),
        Action::Mcp {
            tool: "board_claim",
            args: json!({})
        }
    );
    results.push(format!(
        "wrapped: {}",
        json!({"content": [{"type": "text", "text": claim(1, 3)}]})
    ));
    assert_eq!(
        next(STANDARD, &results),
        Action::Shell("echo done > work.txt".into())
    );
    results.push(String::new());
    assert_eq!(
        next(STANDARD, &results),
        Action::Shell("board done 1 --generation 3".into())
    );
    results.push("done".into());
    results.push(claim(2, 5));
    assert_eq!(
        next(STANDARD, &results),
        Action::Mcp {
            tool: "board_done",
            args: json!({"task": 2, "generation": 5})
        }
    );
    results.push("ok".into());
    assert!(matches!(next(STANDARD, &results), Action::Finish(_)));
}
