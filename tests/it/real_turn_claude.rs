//! The real Claude Code finishes a turn unattended against a scripted model speaking the
//! Anthropic Messages API: it claims a task through the board's MCP tool as its own agent
//! session, writes work.txt and finishes the task with `board done ID --generation G` in its
//! own shell, claims the next one and finishes it through MCP, and nobody answers a dialog.
//! Headless (`claude -p`) in a project set up by plain `board init --agents` (workspace not
//! trusted) and after `--trust`, and interactive in a `board up` pane. Its PostToolUse hook
//! keeps the claims alive (`renew` events). A command Claude must ask permission for shows the
//! agent `waiting` with that command for as long as the dialog is open.

use std::time::Duration;

use serde_json::Value;

use crate::harness::command::{run_within, Out};
use crate::harness::real_clis::{real_project, require};
use crate::harness::scripted::turn::Step;
use crate::harness::scripted::{anthropic, turn, Endpoint};
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;
use crate::harness::{poll, BOARD};
use board::agent_tools::profile::Profile;

/// Longest one headless turn may take on a loaded 2-core machine.
const TURN: Duration = Duration::from_secs(110);

const PROMPT: &str = "Work on the board's tasks.";

/// A 6 s lease (2 s sweep): request-driven renewals are written at most every 750 ms (an eighth of it), so
/// the hook after the slow answer ([`slow_after_the_claim`]) writes one.
fn short_lease(p: &TestBoard) {
    let toml = p.root().join("board.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(text.contains("duration = \"120s\""), "{text}");
    let text = text
        .replace("duration = \"120s\"", "duration = \"6s\"")
        .replace("sweep = \"30s\"", "sweep = \"2s\"");
    std::fs::write(&toml, text).unwrap();
}

/// The standard turn's model, answering 1.5 s late once the claim's result is in: the work
/// step's PostToolUse hook then comes well after every earlier renewal and writes its own.
fn slow_after_the_claim() -> Endpoint {
    let answer = anthropic::answer(turn::STANDARD);
    Endpoint::start(move |req| {
        if req.json["tools"].is_array() && anthropic::tool_results(&req.json).len() == 1 {
            std::thread::sleep(Duration::from_millis(1500));
        }
        answer(req)
    })
}

/// A served project with two ready tasks, set up by `board init --agents` (plus `--trust` when
/// `trust`), and a scripted Anthropic endpoint replaying the standard turn.
fn project(trust: bool) -> (TestBoard, Endpoint) {
    let mut p = real_project("");
    short_lease(&p);
    if trust {
        let out = p.board(&["init", "--agents", "--trust"]);
        assert!(out.success(), "{}", out.text());
    }
    p.serve();
    p.json(&["add", "first task"]);
    p.json(&["add", "second task"]);
    (p, slow_after_the_claim())
}

/// The variables pointing Claude Code at `e` and keeping it off the network.
fn model_env(e: &Endpoint) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", e.base_url()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
    ]
}

/// The claude profile's command line (what `board up` starts) without its prompt.
fn profile_argv(p: &TestBoard) -> Vec<String> {
    let prof = Profile::load(p.root(), "claude").unwrap();
    let mut argv = prof.argv(BOARD, p.root(), &p.root().join(".board"));
    argv.truncate(argv.len() - prof.prompt_args.len());
    argv
}

/// `board run --name claude -- PROFILE-COMMAND -p PROMPT` in the project.
fn headless_turn(p: &TestBoard, e: &Endpoint) -> Out {
    let mut c = p.board_cmd(&["run", "--name", "claude", "--"]);
    c.args(profile_argv(p))
        .args(["-p", PROMPT])
        .envs(model_env(e));
    run_within(&mut c, TURN)
}

fn event<'a>(events: &'a [Value], kind: &str, task: i64) -> Option<&'a Value> {
    events
        .iter()
        .find(|e| e["kind"] == kind && e["task"] == task)
}

/// The turn's request holding the most tool results (the whole conversation).
fn last_turn(e: &Endpoint) -> Option<Value> {
    e.log
        .requests()
        .into_iter()
        .filter(|(r, _)| r.route() == "/v1/messages")
        .map(|(r, _)| r.json)
        .filter(|b| b["tools"].is_array())
        .max_by_key(|b| anthropic::tool_results(b).len())
}

/// How many turns started without the board's tools offered (the model ended them at once).
fn without_board_tools(e: &Endpoint) -> usize {
    e.log
        .requests()
        .iter()
        .filter(|(r, _)| r.route() == "/v1/messages")
        .map(|(r, _)| &r.json)
        .filter(|b| anthropic::tool_results(b).is_empty())
        .filter(|b| {
            let tools: Vec<&Value> = b["tools"].as_array().into_iter().flatten().collect();
            tools.iter().any(|t| t["name"] == anthropic::SHELL_TOOL)
                && !tools.iter().any(|t| t["name"] == "mcp__board__board_claim")
        })
        .count()
}

/// The tool calls the scripted model made, in order, as `NAME INPUT`.
fn tool_calls(e: &Endpoint) -> Vec<String> {
    let Some(last) = last_turn(e) else {
        return vec![];
    };
    last["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| format!("{} {}", b["name"].as_str().unwrap_or(""), b["input"]))
        .collect()
}

/// The standard turn's outcome: both tasks done by the agent `claude`, the first with `board
/// done` from Claude's shell (work.txt written first), the second through MCP, every claim held
/// by Claude's own session, and its hook's renewals in the log.
fn assert_standard_turn(p: &TestBoard, e: &Endpoint, said: &str) {
    let why = || {
        format!(
            "{said}\ntool calls: {:?}\ntool results: {:?}\nrequests:\n{}",
            tool_calls(e),
            last_turn(e).map(|b| anthropic::tool_results(&b)),
            e.log.describe(300)
        )
    };
    let done = poll(Duration::from_secs(20), || {
        let tasks = p.json(&["list"])["tasks"].as_array().cloned()?;
        tasks.iter().all(|t| t["state"] == "done").then_some(tasks)
    });
    assert!(
        done.is_some(),
        "both tasks are not done: {}\n{}",
        p.json(&["list"]),
        why()
    );
    // The model's last answer comes after the board saw the last tool's effect.
    let calls = poll(Duration::from_secs(20), || {
        let calls = tool_calls(e);
        (calls.len() >= 5 && last_turn(e).is_some_and(|b| anthropic::tool_results(&b).len() >= 5))
            .then_some(calls)
    })
    .unwrap_or_else(|| tool_calls(e));
    let expected = [
        "mcp__board__board_claim",
        "Bash",
        "Bash",
        "mcp__board__board_claim",
        "mcp__board__board_done",
    ];
    let names: Vec<&str> = calls
        .iter()
        .map(|c| c.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(names, expected, "{calls:?}\n{}", why());
    assert!(calls[2].contains("board done 1 --generation"), "{calls:?}");
    let work = std::fs::read_to_string(p.root().join("work.txt")).unwrap_or_default();
    assert_eq!(
        work.trim(),
        "done",
        "work.txt from Claude's shell\n{}",
        why()
    );

    let log = p.log();
    for task in [1, 2] {
        let grant =
            event(&log, "grant", task).unwrap_or_else(|| panic!("no grant of {task}: {log:?}"));
        assert_eq!(
            grant["agent"], "claude",
            "the claim is Claude's own: {grant}"
        );
        let finished =
            event(&log, "done", task).unwrap_or_else(|| panic!("no done of {task}: {log:?}"));
        assert_eq!(finished["agent"], "claude", "{finished}");
    }
    // The Stop hook fires after the model's closing answer, which may still be on its way.
    let stop_hook = poll(Duration::from_secs(20), || {
        let log = p.log();
        log.into_iter()
            .find(|e| e["kind"] == "idle" && e["agent"] == "claude")
    });
    assert!(
        stop_hook.is_some(),
        "Claude's Stop hook never reached the board: {log:?}"
    );
    let hook_renewal = log.iter().find(|e| {
        e["kind"] == "renew"
            && e["agent"] == "claude"
            && e["reason"].as_str().is_some_and(|r| r.contains("hook"))
    });
    assert!(
        hook_renewal.is_some(),
        "no renewal by Claude's hook in the log: {log:?}"
    );
}

#[test]
fn claude_headless_before_workspace_trust_finishes_the_turn_unattended() {
    if require("claude").is_none() {
        return;
    }
    let (p, e) = project(false);
    let out = headless_turn(&p, &e);
    assert_standard_turn(&p, &e, &out.text());
}

#[test]
fn claude_headless_in_a_trusted_workspace_finishes_the_turn_unattended() {
    if require("claude").is_none() {
        return;
    }
    let (p, e) = project(true);
    let out = headless_turn(&p, &e);
    assert_standard_turn(&p, &e, &out.text());
}

/// `board.toml`'s agents for the pane tests: one Claude Code.
const ONE_CLAUDE: &str = "[[agents]]\nname = \"claude\"\nprofile = \"claude\"\n";

/// A served project whose one agent is Claude Code started by `board up` in a pane of a private
/// tmux server, pointed (by its profile's environment) at the scripted endpoint `e`,
/// the workspace trusted by `board init --agents --trust`. Two ready tasks wait.
fn in_a_pane(e: Endpoint) -> (TestBoard, Endpoint, Tmux, String) {
    let mut p = real_project(ONE_CLAUDE);
    short_lease(&p);
    let builtin =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/agents/claude.toml"))
            .unwrap();
    let env: String = model_env(&e)
        .iter()
        .map(|(k, v)| format!("{k} = \"{v}\"\n"))
        .collect();
    let profile = match builtin.split_once("[env]\n") {
        Some((before, after)) => format!("{before}[env]\n{env}{after}"),
        None => format!("{builtin}\n[env]\n{env}"),
    };
    p.write_profile("claude", &profile);
    let out = p.board(&["init", "--agents", "--trust"]);
    assert!(out.success(), "{}", out.text());
    p.serve();
    p.json(&["add", "first task"]);
    p.json(&["add", "second task"]);
    let tmux = p.tmux().share();
    let up = p.up_on(&tmux);
    let pane = up["panes"][0]["pane"].as_str().unwrap().to_string();
    (p, e, tmux, pane)
}

#[test]
fn claude_in_a_board_up_pane_finishes_the_turn_unattended() {
    if require("claude").is_none() || Tmux::missing() {
        return;
    }
    let (p, e, tmux, pane) = in_a_pane(slow_after_the_claim());
    // Turn ends (idle events) after which the prompt was typed again.
    let mut typed_after = 0;
    let finished = poll(TURN, || {
        let log = p.log();
        if event(&log, "done", 2).is_some() {
            return Some(());
        }
        // The first prompt came before the MCP server was connected (Claude waits 2 s for it
        // at most): once that turn ended, the person types the prompt again.
        let turns_ended = log
            .iter()
            .filter(|e| e["kind"] == "idle" && e["agent"] == "claude")
            .count();
        if turns_ended > typed_after && typed_after < 3 && without_board_tools(&e) > 0 {
            typed_after = turns_ended;
            tmux.type_text(&pane, PROMPT);
            tmux.keys(&pane, &["Enter"]);
        }
        None
    });
    let screen = tmux.capture(&pane, &[]);
    let offered: Vec<String> = last_turn(&e)
        .and_then(|b| b["tools"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        finished.is_some(),
        "the turn did not finish:\n{screen}\ntools offered: {offered:?}\n{}",
        e.log.describe(300)
    );
    assert_standard_turn(&p, &e, &screen);
}

/// A command outside every allow rule, which Claude asks a person about.
const NOT_ALLOWED: &str = "python3 -c 'print(6 * 7)'";

const ASKS_PERMISSION: &[Step] = &[Step::Shell(NOT_ALLOWED)];

#[test]
fn claude_asking_permission_shows_waiting_naming_the_command_for_the_whole_dialog() {
    if require("claude").is_none() || Tmux::missing() {
        return;
    }
    let (p, e, tmux, pane) = in_a_pane(Endpoint::start(anthropic::answer(ASKS_PERMISSION)));
    let names_the_command = |a: &Value| {
        a["state"] == "waiting"
            && a["waiting"]
                .as_str()
                .is_some_and(|w| w.contains("Bash") && w.contains(NOT_ALLOWED))
    };
    let waiting = poll(TURN, || {
        p.session("claude").filter(|a| names_the_command(a))
    });
    assert!(
        waiting.is_some(),
        "claude is not waiting with the command: {:?}\n{}\n{}",
        p.session("claude"),
        tmux.capture(&pane, &[]),
        e.log.describe(300)
    );
    // Claude's later, vaguer notice of the same dialog (after ~6 s) changes nothing: the
    // message stays specific while nobody answers.
    let degraded = poll(Duration::from_secs(15), || {
        p.session("claude").filter(|a| !names_the_command(a))
    });
    assert!(
        degraded.is_none(),
        "the waiting message changed during the dialog: {degraded:?}\n{}",
        tmux.capture(&pane, &[])
    );
    let log = p.log();
    let waits: Vec<&Value> = log
        .iter()
        .filter(|e| e["agent"] == "claude" && (e["kind"] == "wait" || e["kind"] == "resume"))
        .collect();
    assert_eq!(
        waits.len(),
        1,
        "one wait, no resume while the dialog is open: {waits:?}"
    );
    assert!(
        tmux.capture(&pane, &[]).contains("python3"),
        "the dialog is still open"
    );
}
