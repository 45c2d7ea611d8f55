//! `--json` prints exactly one JSON document on stdout: every client command, as
//! an operator and as an agent, with stdout a pipe and a terminal (`script`), with `PAGER` set,
//! and with warnings forced (trace logging, an invalid edit of board.toml). Every document also
//! matches the printed schema: the method's result on exit 0, else the error
//! object with the exit code of its kind.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;

use crate::harness::command::one_document;
use crate::harness::schema::check_cli;
use crate::harness::test_board::TestBoard;

/// (method for the schema, command line without `--json`).
const OPERATOR: &[(&str, &str)] = &[
    ("goal", "goal 'ship the release'"),
    ("goal", "goal"),
    ("add", "add first --body 'the first thing'"),
    ("add", "add second --after 1"),
    ("add", "add third -p 3"),
    ("edit", "edit 3 --title 'third, renamed'"),
    ("list", "list"),
    ("list", "list --state open"),
    ("ready", "ready"),
    ("show", "show 1"),
    ("show", "show 99"),
    ("note", "note 1 'from the operator'"),
    ("agents", "agents --all"),
    ("agents.prune", "agents --prune --older 1h"),
    ("log", "log --limit 5"),
    ("status", "status"),
    ("claim", "claim"),
    ("check", "check"),
    ("done", "done 1"),
    ("release", "release 1 --force"),
    ("cancel", "cancel 3"),
    ("init", "init"),
    ("down", "down"),
];

const AGENT: &[(&str, &str)] = &[
    ("claim", "claim 1"),
    ("check", "check 1"),
    ("renew", "renew"),
    ("note", "note 1 'from the agent'"),
    ("wait", "wait 'which database?'"),
    ("resume", "resume"),
    ("show", "show 1"),
    ("release", "release 1 --note 'giving it back'"),
    ("claim", "claim 1"),
    ("done", "done 1 --note done"),
    ("done", "done 1"),
    ("claim", "claim"),
    ("claim", "claim 99"),
    ("claim", "claim --wait --timeout 300ms"),
    ("check", "check 1"),
    ("agents", "agents"),
    ("stop", "stop"),
    ("status", "status"),
];

/// Writes `cmds/NAME-K.sh` for each command and a driver script running each one twice: with
/// stdout to a file, then under `script` (stdout a terminal). Returns (driver, runs) where each
/// run is (method, output file stem).
fn driver(dir: &Path, name: &str, cmds: &[(&str, &str)]) -> (String, Vec<(String, String)>) {
    std::fs::create_dir_all(dir.join("cmds")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let mut sh = String::new();
    let mut runs = Vec::new();
    for (k, (method, line)) in cmds.iter().enumerate() {
        let cmd = format!("cmds/{name}-{k}.sh");
        std::fs::write(dir.join(&cmd), format!("board {line} --json\n")).unwrap();
        let pipe = format!("out/{name}-{k}-pipe");
        let tty = format!("out/{name}-{k}-tty");
        sh.push_str(&format!(
            "sh {cmd} > {pipe}.out 2> {pipe}.err; echo $? > {pipe}.rc\n\
             script -qec \"sh {cmd} 2> {tty}.err; echo \\$? > {tty}.rc\" /dev/null > {tty}.out 2>&1 < /dev/null\n"
        ));
        runs.push((method.to_string(), pipe));
        runs.push((method.to_string(), tty));
    }
    (sh, runs)
}

/// Checks every output; returns how many runs warned on stderr and which methods succeeded.
fn verify(dir: &Path, runs: &[(String, String)]) -> (usize, BTreeSet<String>) {
    let mut warned = 0;
    let mut succeeded = BTreeSet::new();
    for (method, stem) in runs {
        let read = |ext: &str| {
            std::fs::read_to_string(dir.join(format!("{stem}.{ext}")))
                .unwrap_or_else(|e| panic!("{stem}.{ext}: {e}"))
        };
        // A terminal turns \n into \r\n.
        let out = read("out").replace('\r', "");
        let code: i32 = read("rc").trim().parse().unwrap();
        let err = read("err");
        let doc = one_document(&out)
            .unwrap_or_else(|e| panic!("{stem} ({method}, exit {code}): {e}\nstderr: {err}"));
        check_cli(method, code, &doc);
        if err.contains("warning") {
            warned += 1;
        }
        if code == 0 {
            succeeded.insert(method.clone());
        }
    }
    (warned, succeeded)
}

fn run_all(p: &TestBoard, warnings: bool) -> usize {
    let dir = p.root();
    let (op_sh, op_runs) = driver(dir, "op", OPERATOR);
    let (agent_sh, agent_runs) = driver(dir, "agent", AGENT);
    std::fs::write(dir.join("operator.sh"), op_sh).unwrap();
    std::fs::write(dir.join("agent.sh"), agent_sh).unwrap();
    let env = |c: &mut std::process::Command| {
        // A pager that would show itself if anything used it.
        c.env("PAGER", "sh -c 'echo PAGED; cat'")
            .env("TERM", "xterm-256color");
        if warnings {
            c.env("BOARD_LOG", "trace").env("RUST_LOG", "trace");
        }
    };
    // The board must be running before board.toml is broken (a broken file cannot start one).
    let (_, code) = p.board_json(&["list"]).json_and_code();
    assert_eq!(code, 0);
    if warnings {
        let path = dir.join("board.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{text}\ncolour = \"red\"\n")).unwrap();
    }

    let mut op = p.command("sh");
    op.arg("operator.sh");
    env(&mut op);
    assert!(op.stderr(Stdio::null()).status().unwrap().success());

    let mut agent = p.command(crate::harness::BOARD);
    agent.args(["run", "--name", "json-out", "--", "sh", "agent.sh"]);
    env(&mut agent);
    assert!(agent.stderr(Stdio::null()).status().unwrap().success());

    let (op_warned, op_ok) = verify(dir, &op_runs);
    let (agent_warned, agent_ok) = verify(dir, &agent_runs);
    // The board was reachable throughout: the commands that should work did.
    for m in [
        "goal", "add", "edit", "list", "ready", "show", "note", "agents", "log", "status",
    ] {
        assert!(op_ok.contains(m), "operator {m} never succeeded: {op_ok:?}");
    }
    for m in [
        "claim", "check", "renew", "note", "wait", "resume", "release", "done",
    ] {
        assert!(
            agent_ok.contains(m),
            "agent {m} never succeeded: {agent_ok:?}"
        );
    }
    let warned = op_warned + agent_warned;

    // `stop` as the operator, then again with no board running: still one document each.
    for _ in 0..2 {
        let (doc, code) = p.board_json(&["stop"]).json_and_code();
        check_cli("stop", code, &doc);
    }
    warned
}

#[test]
fn every_command_prints_one_json_document_with_and_without_a_terminal() {
    let p = TestBoard::builder().unserved();
    let warned = run_all(&p, false);
    assert_eq!(warned, 0, "no warnings without a reason");
}

#[test]
fn warnings_and_trace_logging_never_reach_stdout() {
    let p = TestBoard::builder().unserved();
    let warned = run_all(&p, true);
    // Once per change of the file, not on every call.
    assert_eq!(
        warned, 1,
        "the broken board.toml was warned about once ({warned} times)"
    );
}
