//! The real Codex CLI finishes a turn unattended against a scripted model speaking the OpenAI
//! Responses API on 127.0.0.1, in a project set up by `board init --agents --trust`: headless
//! (`codex exec` under `board run`) and interactive (a `board up` pane). The turn claims through
//! the board's MCP tool as Codex's own agent session, runs `echo done > work.txt`, a pause and
//! `board done ID --generation G` in Codex's shell (board found on the commands' PATH), claims
//! again and finishes through MCP without an approval (board's own tools are approved), and its
//! PostToolUse hook renews the claims (a `renew` event naming the hook). A command the model
//! asks to run outside the sandbox opens Codex's approval dialog: the agent shows `waiting`
//! naming the command for as long as the dialog is up.

use std::time::Duration;

use serde_json::Value;

use crate::harness::command::run_within;
use crate::harness::poll;
use crate::harness::real_clis::{real_project, require};
use crate::harness::scripted::openai_responses::{tool_results, Script};
use crate::harness::scripted::turn::Step;
use crate::harness::scripted::Endpoint;
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;

/// Longest a whole turn of the real Codex may take on a loaded 2-core machine (a few seconds
/// when idle; over 80 s measured at a load average of 17).
const TURN: Duration = Duration::from_secs(240);

/// The agent of `board up`'s pane.
const ONE_CODEX: &str = "[[agents]]\nname = \"codex\"\nprofile = \"codex\"\n";

/// The standard turn with a pause while the first claim is held: the PostToolUse hook after it
/// comes more than one renewal slack (lease / 8 = 2 s) after the last renewal write, so a hook's
/// renewal is written and logged (the sweep's, during the pause, names the hook before it).
const TURN_WITH_A_PAUSE: &[Step] = &[
    Step::ClaimMcp,
    Step::Shell("echo done > work.txt"),
    Step::Shell("sleep 3"),
    Step::DoneShell,
    Step::ClaimMcp,
    Step::DoneMcp,
];

/// The command the permission turn asks to run outside the sandbox.
const ESCALATED: &str = "touch asked-outside-the-sandbox";

/// A turn that asks for one command outside the sandbox (Codex asks a person first).
const ASKS: &[Step] = &[Step::Shell(ESCALATED)];

/// A project with two ready tasks whose user's Codex talks to a scripted model on 127.0.0.1
/// answering with `script` (a user-level provider: the only model Codex can reach), set up by
/// `board init --agents --trust` (the project and board's hooks trusted, as a user does once).
/// A 16 s lease swept every second, so renewals are written (and logged) within the turn.
fn codex_project(extra_toml: &str, script: Script) -> (TestBoard, Endpoint) {
    let endpoint = Endpoint::start(move |r| script.answer(r));
    let p = real_project(extra_toml);
    let toml = p.root().join("board.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let text = text
        .replace("duration = \"120s\"", "duration = \"16s\"")
        .replace("sweep = \"30s\"", "sweep = \"1s\"");
    std::fs::write(&toml, text).unwrap();
    let config = p.home().expect("a user home").join(".codex/config.toml");
    let old = std::fs::read_to_string(&config).unwrap_or_default();
    // A top-level key goes before every table of the file, the provider's table after them.
    std::fs::write(
        &config,
        format!(
            "model_provider = \"scripted\"\n{old}\n[model_providers.scripted]\n\
             name = \"scripted\"\nbase_url = \"{}/v1\"\nenv_key = \"OPENAI_API_KEY\"\n\
             wire_api = \"responses\"\n",
            endpoint.base_url()
        ),
    )
    .unwrap();
    p.board(&["init", "--agents", "--trust", "--json"]).ok();
    (p, endpoint)
}

fn add_two_tasks(p: &TestBoard) {
    p.board(&["add", "first task"]).ok();
    p.board(&["add", "second task"]).ok();
}

/// The event of `kind` on `task`, if any.
fn event(events: &[Value], kind: &str, task: i64) -> Option<Value> {
    events
        .iter()
        .find(|e| e["kind"] == kind && e["task"] == task)
        .cloned()
}

/// Both tasks done, by `board done` in Codex's shell for the first and `board_done` for the
/// second, each claimed by the agent session `agent` itself; the hook's renewals in the log.
fn assert_standard_turn_done(p: &TestBoard, endpoint: &Endpoint, agent: &str) {
    let requests = || endpoint.log.describe(400);
    let done = poll(TURN, || {
        let list = p.json(&["list"]);
        let tasks = list["tasks"].as_array()?.clone();
        (tasks.len() == 2 && tasks.iter().all(|t| t["state"] == "done")).then_some(tasks)
    });
    let all = p.log();
    assert!(
        done.is_some(),
        "the turn did not finish both tasks; events: {all:#?}\nrequests:\n{}",
        requests()
    );
    for task in [1, 2] {
        let grant = event(&all, "grant", task).expect("a grant");
        assert_eq!(grant["agent"], agent, "task {task} claimed by: {grant}");
        let fin = event(&all, "done", task).expect("a done event");
        assert_eq!(fin["agent"], agent, "task {task} finished by: {fin}");
    }
    // The first task: `board done` ran in Codex's shell (its output reached the model) and
    // left the file the step before it wrote.
    let results: Vec<String> = endpoint
        .log
        .requests()
        .iter()
        .flat_map(|(r, _)| tool_results(&r.json))
        .collect();
    let gen1 = event(&all, "done", 1).unwrap()["generation"].clone();
    assert!(
        results
            .iter()
            .any(|r| r.contains(&format!("done #1 (generation {gen1})"))),
        "no `board done 1` output from Codex's shell:\n{}",
        requests()
    );
    assert!(
        !results.iter().any(|r| r.contains("command not found")),
        "board was not on the PATH of Codex's commands:\n{}",
        requests()
    );
    assert!(
        !results.iter().any(|r| r.contains("requires approval")),
        "a board tool needed an approval:\n{}",
        requests()
    );
    let work = std::fs::read_to_string(p.root().join("work.txt")).unwrap_or_default();
    assert_eq!(work.trim(), "done");
    // The PostToolUse hook renewed the claims, and said so.
    let renewed_by_hook = all.iter().any(|e| {
        e["kind"] == "renew"
            && e["agent"] == agent
            && e["reason"].as_str().is_some_and(|r| r.contains("hook"))
    });
    assert!(
        renewed_by_hook,
        "no renew event of {agent} from a hook: {all:#?}"
    );
}

#[test]
fn codex_exec_finishes_the_turn_unattended_with_board_on_path_and_its_tools_approved() {
    let Some(_) = require("codex") else {
        return;
    };
    let (mut p, endpoint) = codex_project("", Script::new(TURN_WITH_A_PAUSE));
    p.serve();
    add_two_tasks(&p);
    let out = run_within(
        &mut p.board_cmd(&[
            "run",
            "--name",
            "codex",
            "--",
            "codex",
            "exec",
            "Work from the board.",
        ]),
        TURN,
    );
    let text = out.text();
    assert!(out.success(), "{text}");
    // Board's Codex settings are all ones Codex reads from a project file.
    assert!(!text.contains("Ignored unsupported"), "{text}");
    assert_standard_turn_done(&p, &endpoint, "codex");
    // Headless, nobody could have answered a dialog: the agent never waited for one.
    let all = p.log();
    assert!(!all.iter().any(|e| e["kind"] == "waiting"), "{all:#?}");
}

/// Starts `board up` on this test's private tmux server, the board already served (an
/// autostarted one may take longer than a client waits on a loaded machine); the pane of agent
/// `codex`.
fn up(p: &mut TestBoard) -> String {
    let tmux = p.tmux().share();
    let up = p.up_on(&tmux);
    up["panes"][0]["pane"].as_str().unwrap().to_string()
}

#[test]
fn interactive_codex_in_a_board_up_pane_finishes_the_turn_without_a_dialog() {
    if require("codex").is_none() || Tmux::missing() {
        return;
    }
    let (mut p, endpoint) = codex_project(ONE_CODEX, Script::new(TURN_WITH_A_PAUSE));
    p.serve();
    add_two_tasks(&p);
    let pane = up(&mut p);
    let tmux = p.tmux().share();
    let done = poll(TURN, || {
        let list = p.json(&["list"]);
        let tasks = list["tasks"].as_array()?.clone();
        (tasks.iter().filter(|t| t["state"] == "done").count() == 2).then_some(())
    });
    assert!(
        done.is_some(),
        "the turn did not finish; the pane:\n{}\nrequests:\n{}",
        tmux.capture(&pane, &[]),
        endpoint.log.describe(400)
    );
    assert_standard_turn_done(&p, &endpoint, "codex");
    let all = p.log();
    assert!(
        !all.iter().any(|e| e["kind"] == "waiting"),
        "an approval dialog came up: {all:#?}\n{}",
        tmux.capture(&pane, &[])
    );
}

/// The `waiting` message of agent `codex` in `board agents --json`, if it waits.
fn waiting(p: &TestBoard) -> Option<String> {
    let list = p.json(&["agents"]);
    let a = list["agents"]
        .as_array()?
        .iter()
        .find(|a| a["id"] == "codex")?;
    a["waiting"].as_str().map(String::from)
}

#[test]
fn a_command_codex_asks_about_shows_the_agent_waiting_on_that_command_for_the_whole_dialog() {
    if require("codex").is_none() || Tmux::missing() {
        return;
    }
    let script = Script {
        steps: ASKS,
        escalate: &[ESCALATED],
    };
    let (mut p, endpoint) = codex_project(ONE_CODEX, script);
    p.serve();
    let pane = up(&mut p);
    let tmux = p.tmux().share();
    let message = poll(TURN, || waiting(&p));
    let message = message.unwrap_or_else(|| {
        panic!(
            "codex never showed waiting; events: {:#?}\nthe pane:\n{}\nrequests:\n{}",
            p.log(),
            tmux.capture(&pane, &[]),
            endpoint.log.describe(400)
        )
    });
    assert!(message.contains(ESCALATED), "{message}");
    // The dialog stays up (nobody answers): so does the specific message.
    let changed = poll(Duration::from_secs(15), || {
        let now = waiting(&p);
        (now.as_deref() != Some(message.as_str())).then_some(now)
    });
    assert!(
        changed.is_none(),
        "the waiting message changed from {message:?} to {changed:?} while the dialog was up:\n{}",
        tmux.capture(&pane, &[])
    );
    assert!(
        !p.root().join("asked-outside-the-sandbox").exists(),
        "the command ran without an answer"
    );
}
