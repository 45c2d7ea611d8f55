//! The real Gemini CLI finishes a real turn unattended against a scripted model (Google's
//! Generative Language API on 127.0.0.1, [`crate::harness::scripted::gemini`]) in a project set
//! up by `board init --agents --trust`: it claims through the board's MCP tool as its own agent
//! session, runs `sleep 3`, `echo done > work.txt` and `board done ID --generation G` in its
//! shell tool, claims again and finishes through MCP; its AfterTool hook's renewals are in `board log`.
//! Headless (`gemini -p` under `board run`) and interactive (a `board up` pane). A command the
//! CLI must ask about shows the agent `waiting` with that command, for the whole dialog.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::harness::command::run_within;
use crate::harness::poll;
use crate::harness::real_clis::{real_project, require};
use crate::harness::scripted::turn::Step;
use crate::harness::scripted::{gemini, Endpoint};
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;

/// Longest a whole turn may take on a loaded 2-core machine.
const TURN: Duration = Duration::from_secs(150);

/// The standard turn with some work in it: renewal writes are coalesced to one per eighth of
/// the lease (2 s of [`project`]'s 16 s), so a hook renews (and the log shows it) only when the
/// work after the claim outlasts that.
const WORKING: &[Step] = &[
    Step::ClaimMcp,
    Step::Shell("sleep 3"),
    Step::Shell("echo done > work.txt"),
    Step::DoneShell,
    Step::ClaimMcp,
    Step::DoneMcp,
];

/// A served project set up by `board init --agents --trust` with two ready tasks and a 16 s
/// lease (4 s sweep), and the user's own policy letting Gemini's shell run `sleep 3` and `echo done >
/// work.txt` (the turn's commands that are not the board's: board allows only its own).
fn project(extra_toml: &str) -> TestBoard {
    // Four CLIs at once on two loaded cores: the operator's commands wait up to 10 s for an
    // answer (under the harness's 15 s per command) instead of 5 s.
    let mut p = real_project(&format!("[client]\ntimeout = \"10s\"\n{extra_toml}"));
    let out = p.board(&["init", "--agents", "--trust"]);
    assert!(out.success(), "{}", out.text());
    let toml = p.root().join("board.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replace("duration = \"120s\"", "duration = \"16s\"")
            .replace("sweep = \"30s\"", "sweep = \"4s\""),
    )
    .unwrap();
    let home = p.home().unwrap().to_path_buf();
    std::fs::write(
        home.join(".gemini/policies/mine.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"echo done\", \"sleep 3\"]\n\
         decision = \"allow\"\nallowRedirection = true\npriority = 50\n",
    )
    .unwrap();
    p.serve();
    p.json(&["add", "first task"]);
    p.json(&["add", "second task"]);
    p
}

/// The task's state; empty when the board did not answer in time (a loaded machine: polled
/// again).
fn task_state(p: &TestBoard, id: i64) -> String {
    let out = p.board_json(&["show", &id.to_string()]);
    if !out.success() {
        return String::new();
    }
    out.json()["task"]["state"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Both tasks done, the first by `board done` in the CLI's shell with the generation of its
/// MCP claim, the second through MCP, both by `agent`; renewals from its hook in the log.
fn assert_standard_turn(p: &TestBoard, ep: &Endpoint, agent: &str) {
    let requests = || ep.log.describe(300);
    let done = poll(TURN, || {
        (task_state(p, 1) == "done" && task_state(p, 2) == "done").then_some(())
    });
    assert!(
        done.is_some(),
        "the turn did not finish both tasks:\n{}",
        requests()
    );
    let log = p.log();
    let of = |kind: &str, task: i64| -> Vec<&Value> {
        log.iter()
            .filter(|e| e["kind"] == kind && e["task"] == task)
            .collect()
    };
    for task in [1, 2] {
        let grants = of("grant", task);
        assert!(
            grants.iter().any(|e| e["agent"] == agent),
            "task {task} was not claimed by {agent}: {grants:?}"
        );
        let dones = of("done", task);
        assert!(
            dones.iter().any(|e| e["agent"] == agent),
            "task {task} was not done by {agent}: {dones:?}"
        );
    }
    // Task 1 went through the CLI's shell, with the generation from the MCP claim's answer.
    let generation = of("done", 1)[0]["generation"].as_i64().unwrap();
    let shell = format!("board done 1 --generation {generation}");
    let sent: Vec<String> = ep
        .log
        .requests()
        .iter()
        .map(|(r, _)| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert!(
        sent.iter()
            .any(|b| b.contains("run_shell_command") && b.contains(&shell)),
        "no `{shell}` in the shell tool:\n{}",
        requests()
    );
    assert!(
        sent.iter().any(|b| b.contains("mcp_board_board_done")),
        "task 2 not finished through MCP:\n{}",
        requests()
    );
    let work = std::fs::read_to_string(p.root().join("work.txt")).unwrap_or_default();
    assert_eq!(work.trim(), "done", "work.txt from the shell tool");
    // The after-tool hook renewed the claims, and the log says so.
    let renewed = poll(Duration::from_secs(20), || {
        p.log().into_iter().find(|e| {
            e["kind"] == "renew"
                && e["agent"] == agent
                && e["reason"].as_str().is_some_and(|r| r.contains("hook"))
        })
    });
    assert!(
        renewed.is_some(),
        "no renew event from {agent}'s hook: {:?}",
        p.log()
            .iter()
            .filter(|e| e["agent"] == agent)
            .collect::<Vec<_>>()
    );
}

#[test]
fn gemini_headless_finishes_the_standard_turn_unattended() {
    let Some(_) = require("gemini") else {
        return;
    };
    let p = project("");
    let ep = Endpoint::start(|r| gemini::answer(WORKING, r));
    let mut c = p.board_cmd(&["run", "--name", "gemini", "--"]);
    c.args(["gemini", "-p", "Work through the board's backlog."])
        .env("GOOGLE_GEMINI_BASE_URL", ep.base_url());
    let out = run_within(&mut c, TURN);
    assert!(
        out.success(),
        "gemini -p failed:\n{}\nrequests:\n{}",
        out.text(),
        ep.log.describe(300)
    );
    assert_standard_turn(&p, &ep, "gemini");
}

/// The shipped `agents/gemini.toml` with the scripted model's address added to its
/// environment, as the project's own `agents/gemini.toml` (which comes before the built-in).
fn scripted_profile(p: &TestBoard, ep: &Endpoint) {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/gemini.toml");
    let text = std::fs::read_to_string(shipped).unwrap();
    assert!(text
        .trim_end()
        .ends_with("GEMINI_CLI_TRUST_WORKSPACE = \"true\""));
    p.write_profile(
        "gemini",
        &format!("{text}GOOGLE_GEMINI_BASE_URL = \"{}\"\n", ep.base_url()),
    );
}

const ONE_GEMINI: &str = r#"
[[agents]]
name = "gemini"
profile = "gemini"
"#;

/// `board up` with [`ONE_GEMINI`] on this test's tmux server; the pane's target.
fn up(p: &mut TestBoard) -> String {
    let tmux = p.tmux().share();
    let up = p.up_on(&tmux);
    up["panes"][0]["pane"].as_str().unwrap().to_string()
}

#[test]
fn gemini_in_a_board_up_pane_finishes_the_standard_turn_unattended() {
    if require("gemini").is_none() || Tmux::missing() {
        return;
    }
    let mut p = project(ONE_GEMINI);
    let ep = Endpoint::start(|r| gemini::answer(WORKING, r));
    scripted_profile(&p, &ep);
    let pane = up(&mut p);
    let tmux = p.tmux().share();
    let finished = poll(TURN, || {
        (task_state(&p, 1) == "done" && task_state(&p, 2) == "done").then_some(())
    });
    assert!(
        finished.is_some(),
        "the pane's turn did not finish:\n{}\nrequests:\n{}",
        tmux.capture(&pane, &[]),
        ep.log.describe(300)
    );
    let screen = tmux.capture(&pane, &[]);
    assert!(!screen.contains("Allow execution"), "{screen}");
    assert_standard_turn(&p, &ep, "gemini");
}

/// A turn whose one command Gemini must ask about: neither the board's nor allowed by the user.
const ASKS: &[Step] = &[Step::Shell("touch asked.txt")];

#[test]
fn gemini_asking_to_run_a_command_shows_waiting_with_that_command_for_the_whole_dialog() {
    if require("gemini").is_none() || Tmux::missing() {
        return;
    }
    let mut p = project(ONE_GEMINI);
    let ep = Endpoint::start(|r| gemini::answer(ASKS, r));
    scripted_profile(&p, &ep);
    let pane = up(&mut p);
    let tmux = p.tmux().share();
    let wanted = "Gemini CLI asks permission to run: touch asked.txt";
    let message = |p: &TestBoard| {
        p.session("gemini")
            .filter(|s| s["state"] == "waiting")
            .and_then(|s| s["waiting"].as_str().map(str::to_string))
    };
    let first = poll(TURN, || message(&p));
    assert!(
        first.as_deref() == Some(wanted),
        "not waiting with the command: {first:?} {:?}\n{}\nrequests:\n{}",
        p.session("gemini"),
        tmux.capture(&pane, &[]),
        ep.log.describe(300)
    );
    // Nobody answers: for 15 s it stays waiting, with the same words.
    let changed = poll(Duration::from_secs(15), || {
        let now = message(&p);
        (now.as_deref() != Some(wanted)).then_some(now)
    });
    assert_eq!(
        changed, None,
        "the waiting message changed during the dialog"
    );
    let shown = p.board(&["agents"]).text();
    assert!(
        shown.contains(wanted),
        "board agents does not show it:\n{shown}"
    );
    assert!(!p.root().join("asked.txt").exists());
}

#[test]
fn gemini_started_by_board_run_in_a_project_set_up_without_trust_reaches_the_board() {
    let Some(_) = require("gemini") else {
        return;
    };
    // `board init --agents` only: the folder is in no trusted list of the user's.
    let mut p = real_project("");
    p.serve();
    p.json(&["add", "first task"]);
    let ep = Endpoint::start(|r| gemini::answer(&[Step::ClaimMcp], r));
    let mut c = p.board_cmd(&["run", "--name", "gemini", "--"]);
    c.args(["gemini", "-p", "Work through the board's backlog."])
        .env("GOOGLE_GEMINI_BASE_URL", ep.base_url());
    let out = run_within(&mut c, TURN);
    assert!(out.success(), "gemini -p failed:\n{}", out.text());
    let granted = p
        .log()
        .into_iter()
        .find(|e| e["kind"] == "grant" && e["task"] == 1);
    assert!(
        granted.as_ref().is_some_and(|e| e["agent"] == "gemini"),
        "gemini's MCP claim never reached the board: {granted:?}\n{}\nrequests:\n{}",
        out.text(),
        ep.log.describe(300)
    );
}
