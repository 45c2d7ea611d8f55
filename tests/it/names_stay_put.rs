//! People see an agent by its configured name, whatever restarts it: five `board down`/`board
//! up` cycles, three restarts from an ended pane and three restarts of the TUI, with a team of
//! `sh` ×2 and `claude`, leave exactly `sh`, `sh-2` and `claude` in `board agents`, in `--json`
//! (`name`, beside a new unique `id`), in each pane's prompt and in the TUI; `board send`
//! reaches an agent by that name. `board status` never starts a board, and says when and why the last one stopped.
//! `board agents --prune` forgets ended sessions, for operators only.
//!
//! Real tmux (a private server per test), real `board run` launchers, real interactive bash
//! panes of the built-in `shell` profile. `claude` is the shell profile under that name: the
//! real Claude Code needs a signed-in account, and the names are what this test is about.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::harness::test_board::TestBoard;
use crate::harness::*;

const NAMES: [&str; 3] = ["claude", "sh", "sh-2"];

fn team() -> TestBoard {
    TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
        // A HOME of its own: the panes' bash reads no personal ~/.bashrc.
        .user_home()
        .config(
            "[[agents]]\nname = \"sh\"\nprofile = \"shell\"\ncount = 2\n\n\
             [[agents]]\nname = \"claude\"\nprofile = \"shell\"\n",
        )
        .unserved()
}

/// The live sessions of `agents --json`, name → id.
fn live(b: &TestBoard) -> BTreeMap<String, String> {
    b.json(&["agents"])["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["ended_at"].is_null())
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                a["id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Waits until exactly the team's three names are live and returns name → id.
fn wait_team(b: &TestBoard, when: &str) -> BTreeMap<String, String> {
    poll(Duration::from_secs(20), || {
        let l = live(b);
        (l.keys().map(String::as_str).collect::<Vec<_>>() == NAMES).then_some(l)
    })
    .unwrap_or_else(|| panic!("{when}: the live agents are {:?}, not {NAMES:?}", live(b)))
}

/// Pane id of each slot of a `board up` answer.
fn panes(up: &Value) -> BTreeMap<String, String> {
    up["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["agent_name"].as_str().unwrap().to_string(),
                p["pane"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Everything people see names the team `sh`, `sh-2`, `claude`: `board agents` (text), each
/// pane's prompt and the TUI, where no session id that differs from its name shows.
fn check_names(b: &mut TestBoard, when: &str, session: &str, panes: &BTreeMap<String, String>) {
    let ids = wait_team(b, when);
    let text = b.board(&["agents"]).stdout;
    let mut first: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    first.sort_unstable();
    assert_eq!(first, NAMES, "{when}: board agents says\n{text}");
    for (slot, pane) in panes {
        let prompt = format!("[board:{slot}]");
        b.tmux().wait_screen(
            pane,
            &["-J"],
            &format!("{when}: {prompt} in the pane of {slot}"),
            Duration::from_secs(15),
            |s| s.contains(&prompt),
        );
    }
    // Ids that are not a part of any name must not show in the TUI.
    let hidden: Vec<&String> = ids
        .values()
        .filter(|id| !NAMES.iter().any(|n| n.contains(id.as_str())))
        .collect();
    let tui = format!("={session}:board");
    let screen = b.tmux().wait_screen(
        &tui,
        &["-J"],
        &format!("{when}: the three names in the TUI"),
        Duration::from_secs(15),
        |s| NAMES.iter().all(|n| s.contains(n)) && s.contains("sh-2"),
    );
    for id in hidden {
        assert!(
            !screen.contains(id.as_str()),
            "{when}: the TUI shows session id {id}:\n{screen}"
        );
    }
}

#[test]
fn down_and_up_five_times_and_restarts_keep_the_names_sh_sh_2_and_claude() {
    let mut b = team();
    b.serve();
    b.tmux();
    let mut seen_ids = Vec::new();
    let mut last_panes = BTreeMap::new();
    let mut session = String::new();
    for cycle in 1..=5 {
        let up = b.json(&["up"]);
        session = up["session"].as_str().unwrap().to_string();
        last_panes = panes(&up);
        check_names(&mut b, &format!("up #{cycle}"), &session, &last_panes);
        seen_ids.extend(live(&b).into_values());
        if cycle < 5 {
            b.json(&["down"]);
            assert!(
                poll_until(Duration::from_secs(15), || live(&b).is_empty()),
                "down #{cycle}: agents still live: {:?}",
                live(&b)
            );
        }
    }
    let unique: std::collections::BTreeSet<&String> = seen_ids.iter().collect();
    assert_eq!(
        unique.len(),
        15,
        "every session got an id of its own: {seen_ids:?}"
    );

    // Three restarts from an ended pane: the agent exits, Enter starts it again.
    for (round, slot) in ["sh", "sh-2", "claude"].into_iter().enumerate() {
        let pane = last_panes[slot].clone();
        let before = live(&b)[slot].clone();
        b.tmux().type_text(&pane, "exit");
        b.tmux().keys(&pane, &["Enter"]);
        b.tmux().wait_screen(
            &pane,
            &["-J"],
            &format!("restart #{}: {slot} ended in its pane", round + 1),
            Duration::from_secs(15),
            |s| s.contains("Enter starts it again"),
        );
        b.tmux().run(&["clear-history", "-t", &pane]);
        b.tmux().keys(&pane, &["Enter"]);
        let after = poll(Duration::from_secs(20), || {
            live(&b).get(slot).filter(|id| **id != before).cloned()
        })
        .unwrap_or_else(|| panic!("restart #{}: {slot} did not come back", round + 1));
        assert!(!seen_ids.contains(&after), "id {after} was used before");
        seen_ids.push(after);
        check_names(
            &mut b,
            &format!("restart #{}", round + 1),
            &session,
            &last_panes,
        );
    }

    // Three restarts of the TUI itself: it shows the same names each time.
    for round in 1..=3 {
        let tui = format!("={session}:board");
        b.tmux().run(&["respawn-pane", "-k", "-t", &tui]);
        check_names(
            &mut b,
            &format!("TUI restart #{round}"),
            &session,
            &last_panes,
        );
    }

    // `board send` reaches the live agent named `sh`, whatever its id.
    let sent = b.json(&["send", "sh", "hello"]);
    assert_eq!(sent["message"]["to"], live(&b)["sh"].as_str(), "{sent}");
    // Ids show in the full list.
    let all = b.board(&["agents", "--all"]).stdout;
    assert!(all.contains(&format!("id {}", live(&b)["sh"])), "{all}");
}

/// The pids of `board serve` processes working in `root`.
fn boards_in(root: &Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cwd = std::fs::read_link(e.path().join("cwd")).ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let serve = cmdline.split(|b| *b == 0).nth(1) == Some(b"serve".as_slice());
            (serve && cwd.starts_with(root)).then_some(pid)
        })
        .collect()
}

#[test]
fn status_without_a_board_says_so_and_starts_none() {
    let mut b = TestBoard::builder().unserved();
    let out = b.board_json(&["status"]);
    assert_eq!(out.code, 8, "{}", out.stdout);
    let v = out.json();
    assert_eq!(v["data"]["kind"], "unavailable", "{v}");
    assert_eq!(v["data"]["running"], false, "{v}");
    assert!(!b.socket().exists(), "status left a socket");
    assert!(boards_in(b.root()).is_empty(), "status started a board");

    // After a clean stop it says when and why.
    b.serve();
    assert_eq!(b.board(&["status"]).code, 0);
    b.stop();
    let out = b.board(&["status"]);
    assert_eq!(out.code, 8);
    assert!(
        out.stderr.contains("stopped by `board stop`"),
        "{}",
        out.stderr
    );
    let v = b.board_json(&["status"]).json();
    assert!(v["data"]["last_run"]["stopped_at"].is_string(), "{v}");
    assert!(!b.socket().exists());
    assert!(boards_in(b.root()).is_empty());

    // A board killed without a word is seen as one that did not stop cleanly.
    b.serve();
    b.kill_serve(nix::sys::signal::Signal::SIGKILL);
    let out = b.board(&["status"]);
    assert_eq!(out.code, 8);
    assert!(
        out.stderr.contains("did not stop cleanly"),
        "{}",
        out.stderr
    );
    assert!(boards_in(b.root()).is_empty(), "status started a board");
}

#[test]
fn an_operator_prunes_ended_sessions_and_an_agent_may_not() {
    let b = TestBoard::start();
    b.board(&["run", "--name", "w", "--", "true"]);
    b.board(&["run", "--name", "w", "--", "true"]);
    let shown = b.json(&["agents"])["agents"].as_array().unwrap().len();
    assert_eq!(shown, 1, "one ended row per name");
    assert_eq!(
        b.json(&["agents", "--all"])["agents"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let refused = b.board(&["run", "--name", "a", "--", "board", "agents", "--prune"]);
    assert_eq!(refused.code, 7, "an agent pruned: {}", refused.stderr);

    let v = b.json(&["agents", "--prune", "--older", "1h"]);
    assert_eq!(v["pruned"], serde_json::json!([]), "{v}");
    let v = b.json(&["agents", "--prune"]);
    assert_eq!(v["pruned"].as_array().unwrap().len(), 3, "{v}");
    assert!(b.json(&["agents", "--all"])["agents"]
        .as_array()
        .unwrap()
        .is_empty());
    // The log keeps them, and their ids are never given again.
    assert!(b.log().iter().any(|e| e["agent"] == "w-2"));
    b.board(&["run", "--name", "w", "--", "true"]);
    let again = &b.json(&["agents", "--all"])["agents"][0];
    assert_eq!(again["name"], "w");
    assert_eq!(again["id"], "w-3");
}

/// The lines of `text` that show task `id` (`#ID   [...] title`).
fn task_lines(text: &str, id: i64) -> Vec<&str> {
    let head = format!("#{id} ");
    text.lines().filter(|l| l.starts_with(&head)).collect()
}

#[test]
fn list_and_show_name_the_agent_that_holds_or_finished_a_task_not_its_session_id() {
    let b = TestBoard::builder().liveness("process").start();
    let (one, two, three) = (b.add("first"), b.add("second"), b.add("third"));
    for id in [one, two] {
        let script = format!("board claim {id} > /dev/null && board done {id} > /dev/null");
        b.board(&["run", "--name", "w", "--", "sh", "-c", &script])
            .ok();
    }
    // The second `w` took back the name over a new session id.
    let id2 = b.task(two)["done_by"].as_str().unwrap().to_string();
    assert_ne!(id2, "w", "the test needs a session id that is not the name");
    let mut holder = b
        .board_cmd(&[
            "run",
            "--name",
            "w",
            "--",
            "sh",
            "-c",
            &format!("board claim {three} > /dev/null && sleep 60"),
        ])
        .spawn()
        .unwrap();
    assert!(poll_until(STEP, || b.task(three)["state"] == "claimed"));
    let id3 = b.task(three)["holder"].as_str().unwrap().to_string();
    assert_ne!(id3, "w");

    for list in [
        b.board(&["list"]).ok(),
        b.board(&["list", "--limit", "10"]).ok(),
    ] {
        let text = &list.stdout;
        assert!(task_lines(text, two)[0].contains("[done by w]"), "{text}");
        assert!(
            task_lines(text, three)[0].contains("[claimed by w g1"),
            "{text}"
        );
        assert!(!text.contains(&id2) && !text.contains(&id3), "{text}");
    }
    let shown = b.board(&["show", &two.to_string()]).ok().stdout;
    assert!(
        task_lines(&shown, two)[0].contains("[done by w]"),
        "{shown}"
    );
    assert!(
        !shown.contains(&id2),
        "history names the agent too: {shown}"
    );
    assert!(shown.contains(&format!("#{two} g1 w: claimed")), "{shown}");

    // JSON keeps the ids.
    let tasks = b.json(&["list"])["tasks"].clone();
    assert_eq!(tasks[1]["done_by"], id2.as_str());
    assert_eq!(tasks[2]["holder"], id3.as_str());
    assert_eq!(
        b.json(&["show", &two.to_string()])["task"]["done_by"],
        id2.as_str()
    );
    // The launcher ends its agent's tree and reports the exit.
    let pid = nix::unistd::Pid::from_raw(holder.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    holder.wait().unwrap();
}
