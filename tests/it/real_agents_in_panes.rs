//! `board up` with the real claude, codex (two panes), gemini, aider and shell profiles: every
//! CLI starts in its pane and is still running 15 s later; the panes stuck in a first-run dialog
//! (Claude's and Codex's workspace trust) show **needs attention** while the others reached
//! their prompt (their hooks called in); the two Codex panes are two identities; closing each
//! pane expels its claim at once and leaves no process of that agent alive within the hangup
//! grace + 2 s (Gemini idle at its prompt included).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::real_clis::{real_project, require};
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;
use crate::harness::{poll, poll_until, BOARD};

const AGENTS: &str = r#"
[[agents]]
name = "claude"
profile = "claude"
attention_after = "10s"

[[agents]]
name = "codex"
profile = "codex"
count = 2
attention_after = "10s"

[[agents]]
name = "gemini"
profile = "gemini"
attention_after = "10s"

[[agents]]
name = "aider"
profile = "aider"

[[agents]]
name = "shell"
profile = "shell"
attention_after = "10s"
"#;

/// Parent pid of `pid`, from /proc/PID/stat (field 4, after the command's closing paren).
fn ppid(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `root` and every process below it.
fn tree(root: i32) -> HashSet<i32> {
    let all: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    let mut out = HashSet::from([root]);
    loop {
        let before = out.len();
        for &p in &all {
            if ppid(p).is_some_and(|pp| out.contains(&pp)) {
                out.insert(p);
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

fn environ(pid: i32, key: &str) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    env.split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")).map(String::from))
}

fn agents(p: &TestBoard) -> Vec<Value> {
    p.json(&["agents", "--all"])["agents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn real_clis_run_in_panes_show_attention_and_end_with_their_panes() {
    let needed = ["claude", "codex", "gemini", "aider"];
    if needed.iter().any(|c| require(c).is_none()) || Tmux::missing() {
        return;
    }
    let mut p = real_project(AGENTS);
    // The test takes each agent's claim with its token from outside its process tree.
    let toml = p.root().join("board.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replace("check_process_tree = true", "check_process_tree = false"),
    )
    .unwrap();
    let tmux = p.tmux().share();
    let up = p.up_on(&tmux);
    let panes: Vec<(String, String)> = up["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["agent_name"].as_str().unwrap().to_string(),
                v["pane"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let names = ["claude", "codex", "codex-2", "gemini", "aider", "shell"];
    assert_eq!(panes.len(), names.len(), "{up}");
    let started = Instant::now();

    // Every session attached its agent process.
    let pids: Vec<(String, i32, i32)> = poll(Duration::from_secs(60), || {
        let list = agents(&p);
        let got: Vec<(String, i32, i32)> = names
            .iter()
            .filter_map(|n| {
                let a = list
                    .iter()
                    .find(|a| a["id"] == *n && a["ended_at"].is_null())?;
                Some((
                    n.to_string(),
                    a["pid"].as_i64()? as i32,
                    a["launcher_pid"].as_i64()? as i32,
                ))
            })
            .collect();
        (got.len() == names.len()).then_some(got)
    })
    .unwrap_or_else(|| panic!("not every agent attached: {:?}", agents(&p)));

    // Still running 15 s later, each the CLI it should be.
    let wait = Duration::from_secs(15).saturating_sub(started.elapsed());
    std::thread::sleep(wait);
    for (name, pid, _) in &pids {
        assert!(
            alive(*pid),
            "{name} (pid {pid}) is not running 15 s after `board up`"
        );
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let program = match name.as_str() {
            "codex-2" => "codex",
            "shell" => "bash",
            n => n,
        };
        assert!(cmdline.contains(program), "{name}: {cmdline}");
    }
    eprintln!("all six agents alive after {:?}", started.elapsed());

    // Dialogs: Claude and both Codex panes wait at workspace trust: needs attention. Gemini (the
    // pane trusts the project) and the shell reached their prompts: their hooks called in.
    let list = poll(Duration::from_secs(30), || {
        let list = agents(&p);
        let state = |n: &str| {
            list.iter()
                .find(|a| a["id"] == n)
                .map(|a| a["state"].as_str().unwrap_or("").to_string())
        };
        (["claude", "codex", "codex-2"]
            .iter()
            .all(|n| state(n).as_deref() == Some("needs_attention")))
        .then_some(list)
    })
    .unwrap_or_else(|| panic!("dialog panes do not show needs attention: {:?}", agents(&p)));
    drop(list);
    let pane_of = |n: &str| panes.iter().find(|x| x.0 == n).unwrap().1.clone();
    for n in ["gemini", "shell"] {
        // Six CLIs starting at once on two cores: Gemini may take longer than its
        // attention_after to reach its prompt; once its hook calls in, attention ends.
        let a = poll(Duration::from_secs(120), || {
            let list = agents(&p);
            let a = list.into_iter().find(|a| a["id"] == n)?;
            a["contacted_at"].is_string().then_some(a)
        })
        .unwrap_or_else(|| {
            panic!(
                "{n}'s hook never called in: {:?}\n{}",
                p.session(n),
                tmux.capture(&pane_of(n), &[])
            )
        });
        assert_ne!(a["state"], "needs_attention", "{a}");
    }
    let tui_target = format!("={}:board", up["session"].as_str().unwrap());
    let tui = tmux.run(&["capture-pane", "-p", "-t", &tui_target]);
    let tui = if tui.contains("NEEDS ATTENTION") {
        tui
    } else {
        poll(Duration::from_secs(15), || {
            std::thread::sleep(Duration::from_millis(200));
            let s = tmux.run(&["capture-pane", "-p", "-t", &tui_target]);
            s.contains("NEEDS ATTENTION").then_some(s)
        })
        .unwrap_or_else(|| panic!("no banner in the TUI:\n{tui}"))
    };
    assert!(tui.contains("claude"), "{tui}");

    // Two Codex panes are two process trees and two identities.
    let (cx1, cx2) = (
        pids.iter().find(|x| x.0 == "codex").unwrap(),
        pids.iter().find(|x| x.0 == "codex-2").unwrap(),
    );
    assert_ne!(cx1.1, cx2.1);
    assert!(!tree(cx1.2).contains(&cx2.1) && !tree(cx2.2).contains(&cx1.1));
    assert_eq!(environ(cx1.1, "BOARD_AGENT").as_deref(), Some("codex"));
    assert_eq!(environ(cx2.1, "BOARD_AGENT").as_deref(), Some("codex-2"));
    // Trusting the folder (and its hooks) in the first pane: its hooks call in as `codex`,
    // while `codex-2` still needs attention.
    // Codex may draw the trust dialog a moment before it reads keys: an Enter sent then is
    // lost, so send it again while the dialog is still on screen.
    let trusted = poll(Duration::from_secs(30), || {
        let screen = tmux.capture(&pane_of("codex"), &[]);
        if !screen.contains("Trust this folder") {
            return Some(());
        }
        tmux.run(&["send-keys", "-t", &pane_of("codex"), "Enter"]);
        std::thread::sleep(Duration::from_millis(700));
        None
    });
    assert!(
        trusted.is_some(),
        "codex's trust dialog never took Enter:\n{}",
        tmux.capture(&pane_of("codex"), &[])
    );
    if tmux
        .poll_screen(&pane_of("codex"), &[], Duration::from_secs(30), |s| {
            s.contains("Hooks need review")
        })
        .is_some()
    {
        // Codex draws the dialog a moment before it reads keys: a Down sent at once is lost
        // and Enter then opens the hook list instead of trusting the hooks.
        std::thread::sleep(Duration::from_millis(300));
        tmux.run(&["send-keys", "-t", &pane_of("codex"), "Down"]);
        std::thread::sleep(Duration::from_millis(300));
        tmux.run(&["send-keys", "-t", &pane_of("codex"), "Enter"]);
    }
    let called = poll(Duration::from_secs(60), || {
        let list = agents(&p);
        let a = list.iter().find(|a| a["id"] == "codex")?;
        a["contacted_at"].is_string().then_some(list)
    })
    .unwrap_or_else(|| {
        panic!(
            "codex's hooks never called in:\n{}",
            tmux.capture(&pane_of("codex"), &[])
        )
    });
    let cx2_view = called.iter().find(|a| a["id"] == "codex-2").unwrap();
    assert_eq!(cx2_view["state"], "needs_attention", "{cx2_view}");

    // One claim each, taken with the agent's own token.
    for (name, pid, _) in &pids {
        let task = p.json(&["add", &format!("work for {name}")])["task"]["id"]
            .as_i64()
            .unwrap();
        let token = environ(*pid, "BOARD_TOKEN").unwrap();
        let out = p
            .command(BOARD)
            .env("BOARD_AGENT", name)
            .env("BOARD_TOKEN", token)
            .args(["--json", "claim", &task.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
    }

    // Closing each pane: its claim is expelled at once, and nothing of the agent survives the
    // hangup grace (3 s) + 2 s.
    for (name, pane) in &panes {
        let (_, pid, launcher) = pids.iter().find(|x| &x.0 == name).unwrap();
        let procs = tree(*launcher);
        assert!(procs.contains(pid));
        let closed = Instant::now();
        tmux.run(&["kill-pane", "-t", pane]);
        let expelled = poll_until(Duration::from_secs(1), || {
            p.json(&["list", "--state", "claimed"])["tasks"]
                .as_array()
                .is_some_and(|t| t.iter().all(|t| t["holder"] != name.as_str()))
        });
        let expel_ms = closed.elapsed().as_millis();
        assert!(
            expelled,
            "{name}'s claim was not expelled within 1 s of its pane closing"
        );
        let gone = poll_until(Duration::from_secs(5), || procs.iter().all(|p| !alive(*p)));
        let left: Vec<String> = procs
            .iter()
            .filter(|p| alive(**p))
            .map(|p| {
                let c = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                format!("{p} {}", String::from_utf8_lossy(&c).replace('\0', " "))
            })
            .collect();
        eprintln!(
            "{name}: claim expelled {expel_ms} ms after its pane closed; {} processes gone after {:?}",
            procs.len(),
            closed.elapsed()
        );
        assert!(
            gone,
            "{name} left processes alive 5 s after its pane closed: {left:?}"
        );
    }
}
