//! aider, the real CLI in a `board up` pane, finishes a real turn against a scripted model
//! speaking OpenAI Chat Completions on 127.0.0.1 (`OPENAI_API_BASE`): it claims with
//! `board claim --json` in its shell, writes `work.txt`, finishes with `board done ID
//! --generation G` read from the claim's output, then claims and finishes the second task the
//! same way. aider has no MCP and asks before every shell command: a person (the test, typing
//! into the pane) answers "Run shell command?" and "Add command output to the chat?", and types
//! the next message, as aider sends nothing by itself. While aider asks, the board shows it
//! **waiting** with the command it asks about, for the whole question; its claims are held by
//! its own agent session, and its notifications command renews them (a `renew` event names it).

use std::time::Duration;

use serde_json::Value;

use crate::harness::poll;
use crate::harness::real_clis::{real_project, require};
use crate::harness::scripted::{openai_chat, turn, Endpoint};
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;

const AIDER: &str = r#"
[[agents]]
name = "aider"
profile = "aider"
"#;

/// What a person types to move aider on to the next step.
const GO_ON: &str = "Go on with the board's tasks.";

/// aider's question about a shell command, as its last line shows it before any answer.
const RUN_QUESTION: &str = "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:";
const ADD_QUESTION: &str = "Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]:";

/// The last non-blank line of the pane: what aider waits for.
fn last_line(tmux: &Tmux, pane: &str) -> String {
    tmux.capture(pane, &["-J"])
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

fn aider_view(p: &TestBoard) -> Value {
    p.session("aider").unwrap_or(Value::Null)
}

/// `board up` on `tmux`'s server with aider pointed at `endpoint`: the pane id.
fn up_with_aider(p: &TestBoard, tmux: &Tmux, endpoint: &Endpoint) -> String {
    // The user's environment for aider: the model's address and name, and litellm's bundled
    // model list (it would fetch one from the network otherwise).
    let base = format!("{}/v1", endpoint.base_url());
    for (k, v) in [
        ("OPENAI_API_BASE", base.as_str()),
        ("AIDER_MODEL", "openai/gpt-4o"),
        ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
    ] {
        tmux.run(&["set-environment", "-g", k, v]);
    }
    let up = p.up_on(tmux);
    up["panes"][0]["pane"].as_str().unwrap().to_string()
}

/// Waits until aider's last line is no longer `before` (it took the keys just sent).
fn moved_on(tmux: &Tmux, pane: &str, before: &str) {
    tmux.wait_screen(
        pane,
        &["-J"],
        "aider to take the keys",
        Duration::from_secs(60),
        |_| last_line(tmux, pane) != before,
    );
}

/// While aider asks to run `command`, the board shows it waiting, naming the command: at once
/// (within 15 s of the question) and then for as long as the question stays (`hold`).
fn assert_waiting_for(p: &TestBoard, command: &str, hold: Duration) {
    let names = |v: &Value| {
        v["state"] == "waiting" && v["waiting"].as_str().is_some_and(|w| w.contains(command))
    };
    poll(Duration::from_secs(15), || {
        names(&aider_view(p)).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "aider asks to run {command:?}, the board shows {}",
            aider_view(p)
        )
    });
    if let Some(v) = poll(hold, || {
        let v = aider_view(p);
        (!names(&v)).then_some(v)
    }) {
        panic!("while aider still asks to run {command:?}, the board shows {v}");
    }
}

/// The command aider asks about: the line above its question.
fn asked_command(tmux: &Tmux, pane: &str) -> String {
    let screen = tmux.capture(pane, &["-J"]);
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.iter().rev().nth(1).unwrap_or(&"").trim().to_string()
}

#[test]
fn aider_in_a_pane_finishes_the_turn_with_a_person_answering_its_questions() {
    if require("aider").is_none() || Tmux::missing() {
        return;
    }
    let endpoint = Endpoint::start(openai_chat::model(turn::SHELL_ONLY));
    let mut p = real_project(AIDER);
    // No sweep during the turn (a 200 s lease, swept every 199 s): the sweep would renew the
    // waiting agent's claims itself, and as a renewal is written at most once per eighth of a
    // lease (25 s), it could take the place of the one by aider's notifications command.
    let toml = p.root().join("board.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let lease = "duration = \"120s\"\nsweep = \"30s\"";
    assert!(text.contains(lease), "{text}");
    let lease_for_test = "duration = \"200s\"\nsweep = \"199s\"";
    std::fs::write(&toml, text.replace(lease, lease_for_test)).unwrap();
    p.serve();
    let first = p.json(&["add", "first task"])["task"]["id"]
        .as_i64()
        .unwrap();
    let second = p.json(&["add", "second task"])["task"]["id"]
        .as_i64()
        .unwrap();
    let tmux = p.tmux().share();
    let pane = up_with_aider(&p, &tmux, &endpoint);
    let report = |what: &str| {
        format!(
            "{what}\nscreen:\n{}\nrequests:\n{}\naider: {}",
            tmux.capture(&pane, &["-J"]),
            endpoint.log.describe(300),
            aider_view(&p)
        )
    };

    // aider starts at its prompt with nothing to do: the person gives it the first message.
    let ready = |l: &str| l == ">";
    tmux.poll_screen(&pane, &["-J"], Duration::from_secs(90), |_| {
        ready(&last_line(&tmux, &pane))
    })
    .unwrap_or_else(|| panic!("{}", report("aider never reached its prompt")));
    tmux.type_text(&pane, "Work through the board's tasks.");
    tmux.keys(&pane, &["Enter"]);
    moved_on(&tmux, &pane, ">");

    // The person answers each question and types the next message until both tasks are done
    // and aider's last reply says so.
    let mut asked = Vec::new();
    let finished = poll(Duration::from_secs(240), || {
        let line = last_line(&tmux, &pane);
        if line.ends_with(RUN_QUESTION) {
            let command = asked_command(&tmux, &pane);
            // The question while the first claim is held is watched for 26 s: the board must
            // keep it specific. That is also more than an eighth of the lease: the
            // notification after it writes a renewal, and the log names it.
            let hold = if asked.len() == 1 { 26 } else { 0 };
            assert_waiting_for(&p, &command, Duration::from_secs(hold));
            asked.push(command);
            tmux.type_text(&pane, "y");
            tmux.keys(&pane, &["Enter"]);
        } else if line.ends_with(ADD_QUESTION) {
            tmux.type_text(&pane, "y");
            tmux.keys(&pane, &["Enter"]);
        } else if ready(&line) {
            if tmux
                .capture(&pane, &["-J"])
                .contains("Both tasks are done.")
            {
                return Some(());
            }
            tmux.type_text(&pane, GO_ON);
            tmux.keys(&pane, &["Enter"]);
        } else {
            return None;
        }
        moved_on(&tmux, &pane, &line);
        None
    });
    assert!(
        finished.is_some(),
        "{}",
        report("aider did not finish the turn")
    );

    // Both tasks done, each by aider's own session with the generation it read from its claim.
    let claim = |task: i64| -> (String, i64) {
        let t = p.json(&["show", &task.to_string()]);
        let t = &t["task"];
        assert_eq!(t["state"], "done", "task {task}: {t}");
        (
            t["done_by"].as_str().unwrap_or("").to_string(),
            t["generation"].as_i64().unwrap(),
        )
    };
    for task in [first, second] {
        let (by, generation) = claim(task);
        assert_eq!(by, "aider", "task {task} finished by {by}");
        let done = format!("board done {task} --generation {generation}");
        assert!(asked.contains(&done), "{done:?} not among {asked:?}");
    }
    assert_eq!(
        asked,
        [
            "board claim --json".to_string(),
            "echo done > work.txt".into(),
            format!("board done {first} --generation {}", claim(first).1),
            "board claim --json".into(),
            format!("board done {second} --generation {}", claim(second).1),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("work.txt")).unwrap_or_default(),
        "done\n"
    );
    let log = p.json(&["log", "--limit", "1000"]);
    let events = log["events"].as_array().unwrap();
    for task in [first, second] {
        let by = |kind: &str| {
            events
                .iter()
                .find(|e| e["kind"] == kind && e["task"] == task)
                .map(|e| e["agent"].clone())
        };
        assert_eq!(by("grant"), Some(Value::from("aider")), "{log}");
        assert_eq!(by("done"), Some(Value::from("aider")), "{log}");
    }

    // aider's notifications command renewed its claim, and the log says so.
    assert!(
        events.iter().any(|e| e["kind"] == "renew"
            && e["agent"] == "aider"
            && e["reason"]
                .as_str()
                .is_some_and(|r| r.contains("hook aider notify"))),
        "no renewal by aider's hook: {log}"
    );

    // aider's last reply had no command: its turn is over, and the board says so.
    poll(Duration::from_secs(15), || {
        (aider_view(&p)["state"] == "idle").then_some(())
    })
    .unwrap_or_else(|| panic!("{}", report("aider is not idle after its last reply")));
}
