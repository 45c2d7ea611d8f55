//! The worktree lifecycle of `[[agents]]` with `worktree = true`, in real git repositories
//! with real `board up` panes on the test's private tmux server: `base` and `include` shape a
//! new worktree, `setup` runs in the pane before the agent (which starts only when it
//! succeeds), `board down` runs `teardown` and says in its own words which worktrees it kept
//! and why, `board up` names running agents that need a restart to take changed options, and
//! the real Claude Code in a new worktree starts with no MCP approval dialog.

use std::fs;
use std::time::Duration;

use serde_json::Value;

use crate::harness::real_clis::{real_project, require};
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;
use crate::harness::{poll, poll_until};

const SLOW: Duration = Duration::from_secs(30);

/// A served board in a git repository (branch `main`, one commit; `.env`, `.board/` and
/// `agents/` ignored) whose `[[agents]]` are `agents`, each profile of `profiles` (name,
/// shell script) running its script with `sh -c`.
fn project(agents: &str, profiles: &[(&str, &str)]) -> TestBoard {
    let mut b = TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
        .config(agents)
        .unserved();
    for (name, script) in profiles {
        b.write_profile(
            name,
            &format!(
                "description = \"scripted\"\ncommand = [\"sh\", \"-c\", {script:?}]\n\n[env]\n\
                 GIT_CONFIG_GLOBAL = \"/dev/null\"\nGIT_AUTHOR_NAME = \"Agent\"\n\
                 GIT_AUTHOR_EMAIL = \"a@example.invalid\"\nGIT_COMMITTER_NAME = \"Agent\"\n\
                 GIT_COMMITTER_EMAIL = \"a@example.invalid\"\n"
            ),
        );
    }
    fs::write(
        b.root().join(".gitignore"),
        ".env\n.board/\nagents/\n*.out\n",
    )
    .unwrap();
    b.git(&["init", "-q", "-b", "main"]);
    b.git(&["add", ".gitignore", "board.toml"]);
    b.git(&["commit", "-q", "-m", "start"]);
    b.serve();
    b.tmux();
    b
}

/// The pane of agent `name` in the answer of `board up --json`.
fn pane_of(up: &Value, name: &str) -> String {
    up["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["agent_name"] == name)
        .unwrap_or_else(|| panic!("no pane of {name}: {up}"))["pane"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn include_copies_env_and_setup_output_comes_before_the_agent() {
    let mut b = project(
        "[[agents]]\nname = \"a\"\nprofile = \"show\"\nworktree = true\nbase = \"main\"\n\
         include = [\".env\", \"config/missing.toml\"]\n\
         setup = \"echo SETUP-RAN-$((20 + 1)); echo made > setup-made.txt\"\n",
        &[("show", "echo AGENT-UP; cat .env; exec sleep 300")],
    );
    fs::write(b.root().join(".env"), "SECRET=forty-two\n").unwrap();
    // A commit on main after `base` was chosen: the new branch starts at main's tip.
    fs::write(b.root().join("later.txt"), "later\n").unwrap();
    b.git(&["add", "later.txt"]);
    b.git(&["commit", "-q", "-m", "later"]);

    let up = b.board(&["up"]);
    let said = up.text();
    assert!(up.success(), "{said}");
    assert!(
        said.contains("include config/missing.toml: not in the project, skipped"),
        "{said}"
    );
    assert!(
        said.contains("setup runs first in the worktree of a"),
        "{said}"
    );

    let panes = b.json(&["up"]);
    let pane = pane_of(&panes, "a");
    let screen = b.tmux().wait_screen(&pane, &[], "the agent", SLOW, |s| {
        s.contains("SECRET=forty-two")
    });
    let (setup_at, agent_at) = (
        screen.find("SETUP-RAN-21").unwrap_or(usize::MAX),
        screen.find("AGENT-UP").unwrap_or(0),
    );
    assert!(
        setup_at < agent_at,
        "setup output not before the agent:\n{screen}"
    );

    let wt = b.root().join(".board/worktrees/a");
    assert_eq!(
        fs::read_to_string(wt.join(".env")).unwrap(),
        "SECRET=forty-two\n"
    );
    assert!(
        wt.join("later.txt").is_file(),
        "the branch did not start at main"
    );
    assert!(wt.join("setup-made.txt").is_file());
    assert!(!wt.join("config/missing.toml").exists());
    // Nothing changed: the agent runs on, nobody is told to restart it.
    assert!(!panes.to_string().contains("needs_restart"), "{panes}");
}

#[test]
fn a_failing_setup_keeps_the_agent_from_starting_and_the_pane_says_why() {
    let mut b = project(
        "[[agents]]\nname = \"a\"\nprofile = \"show\"\nworktree = true\n\
         setup = \"echo installing; echo run >> ../../../setup-runs.out; exit 3\"\n",
        &[("show", "echo AGENT-UP; exec sleep 300")],
    );
    let up = b.json(&["up"]);
    let pane = pane_of(&up, "a");
    let screen = b
        .tmux()
        .wait_screen(&pane, &[], "the setup's failure", SLOW, |s| {
            s.contains("was not started")
        });
    assert!(screen.contains("installing"), "{screen}");
    assert!(
        screen.contains("exited with status 3; agent a was not started"),
        "{screen}"
    );
    assert!(!screen.contains("AGENT-UP"), "{screen}");
    assert!(b.session("a").is_none(), "the agent registered");
    let status = b.board(&["status"]).text();
    assert!(
        status.contains("agent a did not start: its worktree setup failed"),
        "{status}"
    );

    // `board up` again names it and runs the setup again in the same pane.
    let again = b.board(&["up"]);
    let said = again.text();
    assert!(again.success(), "{said}");
    assert!(said.contains("setup had failed for a"), "{said}");
    let runs = b.root().join("setup-runs.out");
    let rerun = poll_until(SLOW, || {
        fs::read_to_string(&runs)
            .unwrap_or_default()
            .lines()
            .count()
            == 2
    });
    assert!(rerun, "{}", b.tmux().capture(&pane, &[]));
    assert!(b.session("a").is_none(), "the agent registered");
}

#[test]
fn board_down_keeps_a_worktree_with_uncommitted_work_and_says_why() {
    let b = project(
        "[[agents]]\nname = \"dirty\"\nprofile = \"scribble\"\nworktree = true\n\n\
         [[agents]]\nname = \"done\"\nprofile = \"commit\"\nworktree = true\n\
         teardown = \"echo torn down > ../../../torn.out\"\n",
        &[
            (
                "scribble",
                "echo notes > notes.txt && echo wrote > ../../../dirty.out; exec sleep 300",
            ),
            (
                "commit",
                "echo work > work.txt && git add work.txt && git commit -qm work && \
                 echo committed > ../../../done.out; exec sleep 300",
            ),
        ],
    );
    b.board(&["up"]).ok();
    let ready = poll_until(SLOW, || {
        b.root().join("dirty.out").exists() && b.root().join("done.out").exists()
    });
    assert!(ready, "the agents did not do their work");

    let down = b.board(&["down"]);
    let said = down.text();
    assert!(down.success(), "{said}");
    let dirty = b.root().join(".board/worktrees/dirty");
    assert!(
        said.contains(&format!(
            "kept the worktree of dirty at {}: 1 path(s) with changes not committed (notes.txt)",
            dirty.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "`git worktree remove --force {}`",
            dirty.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(
            "removed the worktree of done; kept its branch board/done: 1 commit(s) not on main"
        ) && said.contains("`git merge board/done`")
            && said.contains("`git branch -D board/done`"),
        "{said}"
    );
    assert!(!said.contains("use --force"), "git's raw words: {said}");
    assert!(dirty.join("notes.txt").is_file());
    assert!(!b.root().join(".board/worktrees/done").exists());
    assert_eq!(
        fs::read_to_string(b.root().join("torn.out")).unwrap(),
        "torn down\n"
    );
}

#[test]
fn board_up_names_running_agents_that_need_a_restart_for_changed_worktree_options() {
    let b = project(
        "[[agents]]\nname = \"a\"\nprofile = \"idle\"\n\n[[agents]]\nname = \"b\"\nprofile = \"idle\"\n",
        &[("idle", "exec sleep 300")],
    );
    b.board(&["up"]).ok();
    let running = poll_until(SLOW, || {
        b.session("a").is_some() && b.session("b").is_some()
    });
    assert!(running, "the agents did not start");
    let text = fs::read_to_string(b.root().join("board.toml")).unwrap();
    b.write_config(&text.replacen(
        "name = \"a\"\nprofile = \"idle\"\n",
        "name = \"a\"\nprofile = \"idle\"\nworktree = true\n",
        1,
    ));
    let up = b.board(&["up"]);
    let said = up.text();
    assert!(up.success(), "{said}");
    assert!(said.contains("2 already running"), "{said}");
    assert!(
        said.contains("a runs with the old worktree of board.toml; restart it"),
        "{said}"
    );
    assert!(!said.contains("b runs with"), "{said}");
}

#[test]
fn board_up_names_a_running_agent_that_needs_a_restart_for_a_changed_role() {
    let b = project(
        "[[agents]]\nname = \"a\"\nprofile = \"idle\"\nrole = \"coder\"\n\n\
         [[agents]]\nname = \"b\"\nprofile = \"idle\"\n",
        &[("idle", "exec sleep 300")],
    );
    b.board(&["up"]).ok();
    let running = poll_until(SLOW, || {
        b.session("a").is_some() && b.session("b").is_some()
    });
    assert!(running, "the agents did not start");
    let up = b.board(&["up"]);
    assert!(
        !up.text().contains("runs with the old"),
        "nothing changed: {}",
        up.text()
    );

    let text = fs::read_to_string(b.root().join("board.toml")).unwrap();
    b.write_config(&text.replacen("role = \"coder\"", "role = \"reviewer\"", 1));
    let up = b.board(&["up"]);
    let said = up.text();
    assert!(up.success(), "{said}");
    assert!(
        said.contains("a runs with the old role of board.toml; restart it"),
        "{said}"
    );
    assert!(!said.contains("b runs with"), "{said}");
    let panes = b.json(&["up"])["panes"].clone();
    let a = panes
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["agent_name"] == "a")
        .unwrap();
    assert_eq!(a["needs_restart"], serde_json::json!(["role"]), "{panes}");
}

#[test]
fn real_claude_in_a_new_worktree_reaches_its_prompt_without_the_mcp_dialog() {
    if require("claude").is_none() || Tmux::missing() {
        return;
    }
    let mut p =
        real_project("[[agents]]\nname = \"claude\"\nprofile = \"claude\"\nworktree = true\n");
    // The workspace trust (the one dialog no project file can skip) is the user's to give.
    let trust = p.board(&["init", "--agents", "--trust"]);
    assert!(trust.success(), "{}", trust.text());
    let tmux = p.tmux().share();
    let up = p.up_on(&tmux);
    let pane = pane_of(&up, "claude");
    let wt = p.root().join(".board/worktrees/claude");
    let local = fs::read_to_string(wt.join(".claude/settings.local.json")).unwrap();
    assert!(local.contains("enabledMcpjsonServers"), "{local}");

    let seen = poll(Duration::from_secs(120), || {
        let s = tmux.capture(&pane, &[]);
        assert!(
            !s.contains("New MCP server found"),
            "the MCP approval dialog in the worktree:\n{s}"
        );
        // Its prompt's footer: "? for shortcuts", or the permission mode the profile starts
        // it in ("accept edits on").
        (s.contains("for shortcuts") || s.contains("accept edits on")).then_some(s)
    });
    let screen = seen.unwrap_or_else(|| {
        panic!(
            "claude never reached its prompt:\n{}",
            tmux.capture(&pane, &[])
        )
    });
    assert!(!screen.contains("trust this folder"), "{screen}");
    let called = poll(SLOW, || {
        p.session("claude")
            .filter(|a| a["contacted_at"].is_string())
    });
    assert!(called.is_some(), "claude's hooks never reached the board");
    // The settings the board wrote are not the agent's work: the worktree goes. (A loaded
    // machine takes a while to end Claude's process tree; `down` waits for it.)
    let down = p.board_within(&["down"], Duration::from_secs(90));
    let said = down.text();
    assert!(down.success(), "{said}");
    assert!(said.contains("removed the worktree of claude"), "{said}");
}
