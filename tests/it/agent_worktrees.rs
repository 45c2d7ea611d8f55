//! A git worktree per agent (`worktree = true`): two agents in real `board up` tmux panes commit
//! at the same time, 20 times each, each on its own branch `board/<name>`, with no `index.lock`
//! error, no commit holding the other's files, and the commit fence's trailers on every commit.
//! `board down` removes the clean worktrees and keeps the branches.

use std::fs;
use std::time::{Duration, Instant};

use crate::harness::test_board::TestBoard;

use crate::harness::*;

const COMMITS: usize = 20;

/// `git ARGS` in the project, its output without the final newline.
fn git(b: &TestBoard, args: &[&str]) -> String {
    b.git(args).trim_end().to_string()
}

/// The scripted agent: claims a task, waits for the start signal, then commits its own file
/// `COMMITS` times with `git add -A` (which would sweep up anyone else's edits in a shared tree).
fn agent_script() -> String {
    format!(
        r#"set -u
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
  GIT_AUTHOR_NAME=Agent GIT_AUTHOR_EMAIL=a@example.invalid \
  GIT_COMMITTER_NAME=Agent GIT_COMMITTER_EMAIL=a@example.invalid
out="$RESULTS/$BOARD_AGENT"
board claim --json > "$out.claim" || {{ echo "claim failed" > "$out.fail"; exit 1; }}
touch "$out.ready"
while [ ! -e "$RESULTS/go" ]; do sleep 0.01; done
i=1
while [ $i -le {COMMITS} ]; do
  echo "$BOARD_AGENT $i" >> "$BOARD_AGENT.txt"
  git add -A 2>> "$out.err" && git commit -q -m "$BOARD_AGENT commit $i" 2>> "$out.err" || {{
    echo "commit $i failed" >> "$out.fail"; exit 1; }}
  i=$((i+1))
done
git rev-parse --abbrev-ref HEAD > "$out.branch" && mv "$out.branch" "$out.done"
exec sleep 300
"#
    )
}

#[test]
fn agents_in_their_own_worktrees_commit_at_once_without_colliding() {
    let mut b = TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
        .config(
            "[[agents]]\nname = \"a\"\nprofile = \"committer\"\nworktree = true\n\n\
         [[agents]]\nname = \"b\"\nprofile = \"committer\"\nworktree = true\n",
        )
        .unserved();
    let results = b.root().join("results");
    fs::create_dir(&results).unwrap();
    let script = b.root().join("committer.sh");
    fs::write(&script, agent_script()).unwrap();
    b.write_profile(
        "committer",
        &format!(
            "description = \"commits\"\ncommand = [\"sh\", \"{}\"]\n\n[env]\nRESULTS = \"{}\"\n",
            script.display(),
            results.display()
        ),
    );
    fs::write(
        b.root().join(".gitignore"),
        "*.out\nresults/\ncommitter.sh\nagents/\n",
    )
    .unwrap();
    git(&b, &["init", "-q", "-b", "main"]);
    git(&b, &["add", ".gitignore", "board.toml"]);
    git(&b, &["commit", "-q", "-m", "start"]);
    let base = git(&b, &["rev-parse", "HEAD"]);
    let hooks = b.board(&["init", "--git-hooks"]);
    assert!(hooks.success(), "{hooks:?}");
    b.serve();
    b.tmux();
    b.add_tasks(2);

    let up = b.json(&["up"]);
    for p in up["panes"].as_array().unwrap() {
        let name = p["agent_name"].as_str().unwrap();
        assert_eq!(p["branch"], format!("board/{name}"), "{up}");
    }
    let ready = poll_until(Duration::from_secs(15), || {
        ["a", "b"]
            .iter()
            .all(|n| results.join(format!("{n}.ready")).exists())
            || fs::read_dir(&results)
                .unwrap()
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "fail"))
    });
    assert!(ready, "the agents did not claim their tasks");
    let t0 = Instant::now();
    fs::write(results.join("go"), "").unwrap();
    let finished = poll_until(Duration::from_secs(60), || {
        ["a", "b"].iter().all(|n| {
            results.join(format!("{n}.done")).exists() || results.join(format!("{n}.fail")).exists()
        })
    });
    assert!(finished, "the agents did not finish committing");
    println!(
        "{} commits by 2 agents at once in {:.0} ms",
        2 * COMMITS,
        t0.elapsed().as_secs_f64() * 1000.0
    );
    for n in ["a", "b"] {
        let fail = fs::read_to_string(results.join(format!("{n}.fail"))).unwrap_or_default();
        let err = fs::read_to_string(results.join(format!("{n}.err"))).unwrap_or_default();
        assert!(fail.is_empty(), "agent {n}: {fail}\n{err}");
        assert!(!err.contains("index.lock"), "agent {n}: {err}");
        assert_eq!(
            fs::read_to_string(results.join(format!("{n}.done")))
                .unwrap()
                .trim(),
            format!("board/{n}")
        );
    }

    // Each branch: the base, then exactly the agent's own commits, each touching only its file
    // and carrying the trailers of the agent's claim.
    let mut tasks = Vec::new();
    for n in ["a", "b"] {
        let claim: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(results.join(format!("{n}.claim"))).unwrap())
                .unwrap();
        let (task, generation) = (
            claim["task"]["id"].as_i64().unwrap(),
            claim["generation"].as_i64().unwrap(),
        );
        tasks.push(task);
        let branch = format!("board/{n}");
        let commits = git(&b, &["rev-list", "--reverse", &format!("{base}..{branch}")]);
        let commits: Vec<&str> = commits.lines().collect();
        assert_eq!(commits.len(), COMMITS, "{branch}: {commits:?}");
        for (i, c) in commits.iter().enumerate() {
            let files = git(&b, &["show", "--name-only", "--format=", c]);
            assert_eq!(files, format!("{n}.txt"), "{branch} commit {c}");
            let msg = git(&b, &["log", "-1", "--format=%B", c]);
            assert!(msg.starts_with(&format!("{n} commit {}", i + 1)), "{msg}");
            assert!(msg.contains(&format!("Board-Task: {task}")), "{msg}");
            assert!(
                msg.contains(&format!("Board-Generation: {generation}")),
                "{msg}"
            );
        }
    }
    tasks.sort();
    assert_eq!(tasks, [1, 2], "each agent held its own task");
    // The main work tree never saw the agents' files.
    assert!(!b.root().join("a.txt").exists() && !b.root().join("b.txt").exists());
    assert_eq!(git(&b, &["rev-parse", "main"]), base);

    // `board status` and `board agents` show each agent's branch.
    let status = b.json(&["status"]);
    let mut branches: Vec<String> = status["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            format!(
                "{}={}",
                a["id"].as_str().unwrap(),
                a["branch"].as_str().unwrap()
            )
        })
        .collect();
    branches.sort();
    assert_eq!(branches, ["a=board/a", "b=board/b"], "{status}");
    assert_eq!(b.session("a").unwrap()["branch"], "board/a");
    // So does the TUI (in the session's `board` window).
    let tui = format!("={}:board", up["session"].as_str().unwrap());
    let mut screen = String::new();
    let shown = poll_until(Duration::from_secs(10), || {
        screen = b.tmux().run(&["capture-pane", "-p", "-t", &tui]);
        ["a", "b"].iter().all(|n| {
            screen
                .lines()
                .any(|l| l.contains(&format!(" {n} ")) && l.contains(&format!("⎇ board/{n}")))
        })
    });
    assert!(shown, "the TUI does not show the branches:\n{screen}");

    // `board down` removes the (clean) worktrees; the branches stay for merging.
    let down = b.json(&["down"]);
    let wts = down["worktrees"].as_array().unwrap();
    assert_eq!(wts.len(), 2, "{down}");
    assert!(wts.iter().all(|w| w["removed"] == true), "{down}");
    assert!(!b.root().join(".board/worktrees/a").exists());
    let left = git(&b, &["branch", "--list", "board/*"]);
    assert!(
        left.contains("board/a") && left.contains("board/b"),
        "{left}"
    );
    git(&b, &["merge", "-q", "--no-edit", "board/a", "board/b"]);
    assert!(b.root().join("a.txt").exists() && b.root().join("b.txt").exists());
}
