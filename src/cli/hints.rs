//! Hints for the mistakes a new user makes first: a command line that clap refuses, a listing
//! that is empty only because of a default filter.

use serde_json::Value;

/// For `board run claude …` (the agent's command without the `--` separator): the command line
/// that works, e.g. `board run --name c -- claude --verbose`. None when the arguments are not a
/// `run` command or already have the separator.
///
/// `args` are the process arguments, program name first.
pub fn run_separator(args: &[String]) -> Option<String> {
    let run_at = args.iter().position(|a| a == "run")?;
    // Only when `run` is the subcommand, not a value of an earlier option.
    if args[1..run_at].iter().any(|a| !a.starts_with('-')) {
        return None;
    }
    let rest = &args[run_at + 1..];
    if rest.iter().any(|a| a == "--") {
        return None;
    }
    let mut options = Vec::new();
    let mut command = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        if command.is_empty() && (a == "--name" || a == "--pane") {
            options.push(a.clone());
            if let Some(v) = rest.get(i + 1) {
                options.push(v.clone());
            }
            i += 2;
            continue;
        }
        if command.is_empty() && (a.starts_with("--name=") || a == "--json") {
            options.push(a.clone());
        } else {
            command.push(a.clone());
        }
        i += 1;
    }
    if command.is_empty() {
        return None;
    }
    let mut line = vec!["board".to_string(), "run".to_string()];
    line.extend(options);
    line.push("--".into());
    line.extend(command);
    Some(format!(
        "the agent's command goes after `--`: {}",
        line.join(" ")
    ))
}

/// The note a human-output command prints on stderr when the board says the caller has unread
/// messages (`inbox` in the result, or in an error's data): `board: 2 unread messages (from
/// codex-1, operator): \`board inbox\` reads them`.
pub fn inbox_note(inbox: Option<&Value>) -> Option<String> {
    let inbox = inbox?;
    let n = inbox["unread"].as_i64().filter(|n| *n > 0)?;
    let from: Vec<String> = inbox["from"]
        .as_array()
        .into_iter()
        .flatten()
        .map(crate::proto::sanitize::value_line)
        .collect();
    let plural = if n == 1 { "" } else { "s" };
    Some(format!(
        "board: {n} unread message{plural} (from {}): `board inbox` reads them",
        from.join(", ")
    ))
}

/// For `board agents` without `--all`: when no session is live but some ended, say how to see
/// them all (the list shows only the last recent one of each name). `result` is the `agents`
/// answer (`agents`, `ended`, `all`).
pub fn agents_all(result: &Value) -> Option<String> {
    let live = result["agents"]
        .as_array()
        .map_or(0, |l| l.iter().filter(|a| a["ended_at"].is_null()).count());
    let ended = result["ended"].as_i64().unwrap_or(0);
    let all = result["all"] == serde_json::json!(true);
    (live == 0 && ended > 0 && !all).then(|| {
        let shown = if result["agents"].as_array().is_some_and(|l| !l.is_empty()) {
            "none of these is live"
        } else {
            "no live agent sessions"
        };
        format!("{shown}; {ended} ended in all (`board agents --all` lists every session, its id and why it ended)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_command_without_separator_gets_the_working_line() {
        assert_eq!(
            run_separator(&args("board run claude")).as_deref(),
            Some("the agent's command goes after `--`: board run -- claude")
        );
        assert_eq!(
            run_separator(&args("board run --name c claude --verbose")).as_deref(),
            Some("the agent's command goes after `--`: board run --name c -- claude --verbose")
        );
    }

    #[test]
    fn other_command_lines_get_no_hint() {
        assert_eq!(run_separator(&args("board run -- claude")), None);
        assert_eq!(run_separator(&args("board run --name c")), None);
        assert_eq!(run_separator(&args("board add run")), None);
    }

    #[test]
    fn agents_hint_only_when_everything_ended() {
        let v = serde_json::json!({ "agents": [], "ended": 2 });
        assert!(agents_all(&v).unwrap().contains("--all"));
        let v = serde_json::json!({ "agents": [], "ended": 0 });
        assert_eq!(agents_all(&v), None);
        let v = serde_json::json!({ "agents": [{"id": "a"}], "ended": 2 });
        assert_eq!(agents_all(&v), None);
    }
}
