//! Done means landed, in real git repositories: with `[review] required` a holder's `board done`
//! waits in review with its commit; `board accept` lands it on `main` by compare-and-swap (two
//! shell agents under `board up`, in their own worktrees); a lapsed holder's commit never lands,
//! even under the new holder's; a push between accept and land makes the board prepare again or
//! stop, and `main` never loses a commit; a conflict leaves `main` untouched and sends the task
//! back to ready with the paths in a note.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::harness::command::{run_within, Out};
use crate::harness::test_board::TestBoard;
use crate::harness::*;

/// Git's test identity, for a shell agent's script.
pub(crate) const GIT_ENV: &str = "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
  GIT_AUTHOR_NAME=Agent GIT_AUTHOR_EMAIL=a@example.invalid \
  GIT_COMMITTER_NAME=Agent GIT_COMMITTER_EMAIL=a@example.invalid\n";

/// A land is git work (a merge, hooks, the swap, again when the base moved): on a loaded
/// machine it outlasts the default 5 s a command waits for an answer.
pub(crate) const LAND_WAIT: &str = "[client]\ntimeout = \"60s\"\n\n";

/// A project in a git repository on `main` with the commit fence hooks, `[review]` and `[git]`
/// as `review_and_git` says, and a board serving it.
pub(crate) fn repo(lease: &str, review_and_git: &str) -> TestBoard {
    let mut b = TestBoard::builder()
        .lease(lease)
        .sweep("100ms")
        .liveness("process")
        .config(&format!("{LAND_WAIT}{review_and_git}"))
        .unserved();
    fs::write(
        b.root().join(".gitignore"),
        ".board/\nwt-*/\n*.out\n*.txt\nresults/\nagents/\ncommitter.sh\nhooks-mark/\n",
    )
    .unwrap();
    b.git(&["init", "-q", "-b", "main"]);
    b.git(&["add", ".gitignore", "board.toml"]);
    b.git(&["commit", "-q", "-m", "start"]);
    assert!(b.board(&["init", "--git-hooks"]).success());
    b.serve();
    b
}

/// `git ARGS` in `dir` with the test identity; must succeed; its trimmed stdout.
#[track_caller]
pub(crate) fn git_in(b: &TestBoard, dir: &Path, args: &[&str]) -> String {
    let out = b
        .git_cmd()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?} in {dir:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Whether commit `a` is an ancestor of (or is) `b`.
pub(crate) fn is_ancestor(b: &TestBoard, a: &str, of: &str) -> bool {
    b.git_cmd()
        .args(["merge-base", "--is-ancestor", a, of])
        .status()
        .expect("run git")
        .success()
}

pub(crate) fn main_head(b: &TestBoard) -> String {
    b.git(&["rev-parse", "main"]).trim().to_string()
}

/// A worktree `wt-NAME` on a new branch `board/NAME` made from `from`.
pub(crate) fn worktree(b: &TestBoard, name: &str, from: &str) -> PathBuf {
    let path = b.root().join(format!("wt-{name}"));
    let branch = format!("board/{name}");
    b.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        &branch,
        path.to_str().unwrap(),
        from,
    ]);
    path
}

/// `board run --name NAME -- sh -c SCRIPT` in `dir`, to its end; must succeed.
#[track_caller]
pub(crate) fn agent_in(b: &TestBoard, dir: &Path, name: &str, script: &str) -> Out {
    let mut c = b.board_cmd(&["run", "--name", name, "--", "sh", "-c"]);
    c.arg(format!("{GIT_ENV}set -e\n{script}"))
        .current_dir(dir)
        .env("BOARD_ROOT", b.root());
    let out = run_within(&mut c, STEP);
    assert!(out.success(), "agent {name}: {out:?}");
    out
}

/// `board --json ARGS`: (the JSON answer or error, exit code).
fn board_json(b: &TestBoard, args: &[&str]) -> (Value, i32) {
    b.board_json(args).json_and_code()
}

pub(crate) fn task(b: &TestBoard, id: i64) -> Value {
    b.json(&["show", &id.to_string()])["task"].clone()
}

/// The shell agent `board up` starts in its worktree: claims its task (a: 1, b: 2), commits its
/// own file, finishes with `board done` (no `--commit`: the head of its branch), then idles.
pub(crate) fn committer_script() -> String {
    format!(
        r#"set -u
{GIT_ENV}case "$BOARD_AGENT" in a) id=1;; *) id=2;; esac
out="$RESULTS/$BOARD_AGENT"
board claim $id --json > "$out.claim" 2>&1 || {{ echo "claim failed" > "$out.fail"; exit 1; }}
echo "work of $BOARD_AGENT" > "$BOARD_AGENT.md"
git add "$BOARD_AGENT.md" && git commit -q -m "$BOARD_AGENT finishes task $id" 2> "$out.err" || {{
  echo "commit failed" >> "$out.fail"; exit 1; }}
board done $id --json > "$out.tmp" 2>> "$out.err" && mv "$out.tmp" "$out.done" || echo "done failed" >> "$out.fail"
exec sleep 300
"#
    )
}

#[test]
fn two_agents_in_worktrees_finish_into_review_and_both_land_on_main_when_accepted() {
    let mut b = TestBoard::builder()
        .lease("30s")
        .sweep("1s")
        .liveness("process")
        .config(&format!(
            "{LAND_WAIT}[review]\nrequired = true\n\n[git]\nbase = \"main\"\nland = \"merge\"\n\n\
             [[agents]]\nname = \"a\"\nprofile = \"committer\"\nworktree = true\n\n\
             [[agents]]\nname = \"b\"\nprofile = \"committer\"\nworktree = true\n"
        ))
        .unserved();
    let results = b.root().join("results");
    fs::create_dir(&results).unwrap();
    let script = b.root().join("committer.sh");
    fs::write(&script, committer_script()).unwrap();
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
        ".board/\n*.out\nresults/\ncommitter.sh\nagents/\n",
    )
    .unwrap();
    b.git(&["init", "-q", "-b", "main"]);
    b.git(&["add", ".gitignore", "board.toml"]);
    b.git(&["commit", "-q", "-m", "start"]);
    assert!(b.board(&["init", "--git-hooks"]).success());
    b.serve();
    b.tmux();
    b.add_tasks(2);
    b.json(&["up"]);

    let finished = poll_until(Duration::from_secs(30), || {
        ["a", "b"].iter().all(|n| {
            results.join(format!("{n}.done")).exists() || results.join(format!("{n}.fail")).exists()
        })
    });
    assert!(finished, "the agents did not finish their tasks");
    for n in ["a", "b"] {
        let fail = fs::read_to_string(results.join(format!("{n}.fail"))).unwrap_or_default();
        let err = fs::read_to_string(results.join(format!("{n}.err"))).unwrap_or_default();
        assert!(fail.is_empty(), "agent {n}: {fail}\n{err}");
    }

    // Both wait in review, each with the head of its agent's branch; main has neither yet.
    let review = b.json(&["list", "--state", "review"]);
    let listed: Vec<i64> = review["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(listed, vec![1, 2], "{review}");
    let before = main_head(&b);
    let mut commits = Vec::new();
    for (id, name) in [(1, "a"), (2, "b")] {
        let t = task(&b, id);
        assert_eq!(t["state"], "review", "{t}");
        assert_eq!(t["holder"], Value::Null, "no lease runs during review: {t}");
        let head = b
            .git(&["rev-parse", &format!("board/{name}")])
            .trim()
            .to_string();
        assert_eq!(t["commit"], head.as_str(), "{t}");
        assert!(!is_ancestor(&b, &head, &before));
        commits.push(head);
    }

    for id in [1, 2] {
        let (accepted, code) = board_json(&b, &["accept", &id.to_string()]);
        assert_eq!(code, 0, "{accepted}");
        assert_eq!(accepted["task"]["state"], "done", "{accepted}");
        assert_eq!(accepted["landed"], main_head(&b).as_str(), "{accepted}");
    }
    let log = b.git(&["log", "main", "--format=%B"]);
    for (i, c) in commits.iter().enumerate() {
        assert!(
            is_ancestor(&b, c, "main"),
            "commit of task {} is on main",
            i + 1
        );
        assert!(log.contains(&format!("Board-Task: {}", i + 1)), "{log}");
    }
    assert!(is_ancestor(&b, &before, "main"), "main was never rewound");
    for id in [1, 2] {
        let t = task(&b, id);
        assert_eq!(t["state"], "done", "{t}");
        assert_eq!(t["commit"], commits[id as usize - 1].as_str(), "{t}");
        assert!(
            t["landed"]
                .as_str()
                .is_some_and(|l| is_ancestor(&b, l, "main")),
            "{t}"
        );
    }
    // The main worktree had main checked out, clean: its files caught up with the land.
    assert!(b.root().join("a.md").exists() && b.root().join("b.md").exists());
    assert_eq!(
        b.git(&["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
}

#[test]
fn a_lapsed_holders_commit_never_lands_even_under_the_new_holders_work() {
    // Long enough that a loaded machine renews it while A works; A is stopped past it.
    let b = repo(
        "5s",
        "[review]\nrequired = true\n\n[git]\nbase = \"main\"\nland = \"merge\"\n",
    );
    b.add("one change");
    let wt_a = worktree(&b, "a", "main");

    // A claims and commits at generation 1, then is stopped (SIGSTOP) past its lease.
    let mut a = b
        .board_cmd(&["run", "--name", "a", "--", "sh", "-c"])
        .arg(format!(
            "{GIT_ENV}set -e\nboard claim 1 > /dev/null\necho a > a.md && git add a.md\n\
             git commit -q -m 'a works on task 1'\necho $$ > a.pid\nexec sleep 300\n"
        ))
        .current_dir(&wt_a)
        .env("BOARD_ROOT", b.root())
        .spawn()
        .unwrap();
    let pid: i32 = poll(STEP, || {
        fs::read_to_string(wt_a.join("a.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    })
    .expect("agent a did not commit in time");
    let reap = KillOnDrop(pid);
    let a_commit = git_in(&b, &wt_a, &["rev-parse", "HEAD"]);
    assert!(git_in(&b, &wt_a, &["log", "-1", "--format=%B"]).contains("Board-Generation: 1"));
    stop(pid, "-STOP");
    let lapsed = poll_until(STEP, || task(&b, 1)["holder"].is_null());
    assert!(lapsed, "a's claim did not end");

    // B claims at generation 2, builds on A's branch, finishes: the task is in review.
    let wt_b = worktree(&b, "b", "board/a");
    agent_in(
        &b,
        &wt_b,
        "b",
        "board claim 1 > /dev/null\necho b > b.md && git add b.md\n\
         git commit -q -m 'b finishes task 1'\nboard done 1 > /dev/null\n",
    );
    assert_eq!(task(&b, 1)["state"], "review");
    let before = main_head(&b);

    // The accept refuses to land, naming A's commit and both generations; main is untouched.
    let (refused, code) = board_json(&b, &["accept", "1"]);
    assert_eq!(code, 5, "{refused}");
    let text = refused.to_string();
    assert!(text.contains(&a_commit), "names a's commit: {text}");
    assert!(
        text.contains("Board-Generation: 1") && text.contains("generation 2"),
        "{text}"
    );
    assert_eq!(main_head(&b), before);
    assert_eq!(task(&b, 1)["state"], "review", "the task stays in review");

    // Forcing A's commit itself: rejected back to ready, B claims at generation 3 and names
    // A's commit; the accept refuses it the same way.
    b.json(&["reject", "1", "--note", "it carries a's lapsed work"]);
    agent_in(
        &b,
        &wt_b,
        "b",
        &format!("board claim 1 > /dev/null\nboard done 1 --commit {a_commit} > /dev/null\n"),
    );
    let (refused, code) = board_json(&b, &["accept", "1"]);
    assert_eq!(code, 5, "{refused}");
    assert!(refused.to_string().contains(&a_commit), "{refused}");
    assert_eq!(main_head(&b), before);

    // B's work made on a clean branch from main lands.
    b.json(&["reject", "1", "--note", "redo it from main"]);
    let wt_c = worktree(&b, "b-clean", "main");
    agent_in(
        &b,
        &wt_c,
        "b",
        "board claim 1 > /dev/null\necho b > b.md && git add b.md\n\
         git commit -q -m 'b redoes task 1'\nboard done 1 --commit HEAD > /dev/null\n",
    );
    let (landed, code) = board_json(&b, &["accept", "1"]);
    assert_eq!(code, 0, "{landed}");
    let clean = git_in(&b, &wt_c, &["rev-parse", "HEAD"]);
    assert!(is_ancestor(&b, &clean, "main"));
    assert!(
        !is_ancestor(&b, &a_commit, "main"),
        "a's commit never reached main"
    );
    assert!(is_ancestor(&b, &before, "main"));

    drop(reap);
    let _ = a.wait();
}

/// Kills the stopped agent however the test ends.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", &self.0.to_string()])
            .status();
    }
}

/// Sends `signal` (`-STOP`, `-KILL`) to `pid`.
fn stop(pid: i32, signal: &str) {
    let ok = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {signal} {pid}");
}

/// A `post-merge` hook that, in the board's land worktree, pushes a commit onto `main` (as
/// another person's push would) while `hooks-mark/push` counts down: it runs after the board
/// prepared its merge and before the compare-and-swap, every time.
const PUSH_HOOK: &str = r#"#!/bin/sh
case "$PWD" in */land) ;; *) exit 0 ;; esac
mark="$MARK_DIR"
[ -s "$mark/push" ] || exit 0
n=$(cat "$mark/push")
if [ "$n" -le 1 ]; then rm -f "$mark/push"; else echo $((n - 1)) > "$mark/push"; fi
export GIT_INDEX_FILE="$mark/index.tmp"
git read-tree main
i=$(ls "$mark" | wc -l)
blob=$(echo "pushed $i" | git hash-object -w --stdin)
git update-index --add --cacheinfo "100644,$blob,pushed-$i-$$.md"
c=$(git commit-tree "$(git write-tree)" -p main -m "someone pushes $i")
rm -f "$GIT_INDEX_FILE"
git update-ref refs/heads/main "$c"
echo "$c" > "$mark/pushed-$c"
"#;

#[test]
fn a_push_between_accept_and_land_makes_the_board_prepare_again_and_main_never_loses_a_commit() {
    let b = repo(
        "30s",
        "[review]\nrequired = true\n\n[git]\nbase = \"main\"\nland = \"merge\"\n",
    );
    // People push to main; nobody has it checked out here.
    b.git(&["checkout", "-q", "--detach"]);
    let mark = b.root().join("hooks-mark");
    fs::create_dir(&mark).unwrap();
    let hook = b.root().join(".git/hooks/post-merge");
    fs::write(
        &hook,
        PUSH_HOOK.replace("$MARK_DIR", mark.to_str().unwrap()),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&hook).status().unwrap();
    let wt = worktree(&b, "w", "main");

    let mut seen = vec![main_head(&b)];
    for round in 1..=20 {
        let id = b.add(&format!("round {round}"));
        agent_in(
            &b,
            &wt,
            "w",
            &format!(
                "board claim {id} > /dev/null\necho {round} > r{round}.md && git add r{round}.md\n\
                 git commit -q -m 'round {round}'\nboard done {id} > /dev/null\n"
            ),
        );
        let commit = task(&b, id)["commit"].as_str().unwrap().to_string();
        seen.push(main_head(&b));
        // Every fifth round main moves during every attempt: the board stops and says so.
        let pushes = if round % 5 == 0 { 3 } else { 1 };
        fs::write(mark.join("push"), pushes.to_string()).unwrap();
        let (answer, code) = board_json(&b, &["accept", &id.to_string()]);
        if pushes == 3 {
            assert_eq!(code, 4, "round {round}: {answer}");
            assert!(
                answer
                    .to_string()
                    .contains("moved during each of 3 attempts"),
                "{answer}"
            );
            assert_eq!(task(&b, id)["state"], "review", "round {round}");
            let (again, code) = board_json(&b, &["accept", &id.to_string()]);
            assert_eq!(code, 0, "round {round}: {again}");
        } else {
            assert_eq!(code, 0, "round {round}: {answer}");
        }
        assert!(
            is_ancestor(&b, &commit, "main"),
            "round {round}: the task's commit landed"
        );
        assert_eq!(task(&b, id)["state"], "done", "round {round}");
        for entry in fs::read_dir(&mark).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(c) = name.strip_prefix("pushed-") {
                seen.push(c.to_string());
            }
        }
        for old in &seen {
            assert!(
                is_ancestor(&b, old, "main"),
                "round {round}: main lost {old}"
            );
        }
    }
    let pushed = fs::read_dir(&mark)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("pushed-"))
        .count();
    assert_eq!(
        pushed,
        16 + 4 * 3,
        "a push in every attempt the hook was armed for"
    );
}

#[test]
fn a_conflicting_change_sends_the_task_back_to_ready_with_the_paths_and_main_stays() {
    let b = repo(
        "30s",
        "[review]\nrequired = true\n\n[git]\nbase = \"main\"\nland = \"merge\"\n",
    );
    fs::write(b.root().join("shared.md"), "one\n").unwrap();
    b.git(&["add", "shared.md"]);
    b.git(&["commit", "-q", "-m", "shared file"]);
    let id = b.add("edit the shared file");
    let wt = worktree(&b, "w", "main");
    agent_in(
        &b,
        &wt,
        "w",
        &format!(
            "board claim {id} > /dev/null\necho agent > shared.md && git add shared.md\n\
             git commit -q -m 'agent edits shared'\nboard done {id} > /dev/null\n"
        ),
    );
    // Meanwhile a person changes the same line on main.
    fs::write(b.root().join("shared.md"), "person\n").unwrap();
    b.git(&["commit", "-q", "-am", "person edits shared"]);
    let before = main_head(&b);

    let (refused, code) = board_json(&b, &["accept", &id.to_string()]);
    assert_eq!(code, 4, "{refused}");
    assert!(refused.to_string().contains("shared.md"), "{refused}");
    assert_eq!(main_head(&b), before, "main unchanged");
    let show = b.show(id);
    assert_eq!(show["task"]["state"], "open", "{show}");
    assert_eq!(show["task"]["ready"], true, "{show}");
    let notes = show["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["text"].as_str().unwrap().contains("shared.md")),
        "{show}"
    );
    assert!(
        show["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "rejected"),
        "{show}"
    );
    assert_eq!(
        b.git(&["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
}

#[test]
fn a_dirty_checkout_of_main_is_refused_and_with_review_off_done_lands_at_once() {
    let b = repo("30s", "[git]\nbase = \"main\"\nland = \"merge\"\n");
    fs::write(b.root().join("notes.md"), "mine\n").unwrap();
    b.git(&["add", "notes.md"]);
    b.git(&["commit", "-q", "-m", "notes"]);
    let id = b.add("add a file");
    let wt = worktree(&b, "w", "main");
    // The person has uncommitted edits on main: the land refuses and says what to do.
    fs::write(b.root().join("notes.md"), "mine, edited\n").unwrap();
    let before = main_head(&b);
    let mut c = b.board_cmd(&["run", "--name", "w", "--", "sh", "-c"]);
    c.arg(format!(
        "{GIT_ENV}board claim {id} > /dev/null\necho w > w.md && git add w.md\n\
         git commit -q -m 'w adds a file'\nboard done {id}\n"
    ))
    .current_dir(&wt)
    .env("BOARD_ROOT", b.root());
    let out = run_within(&mut c, STEP);
    assert!(out.stderr.contains("uncommitted changes"), "{out:?}");
    assert_eq!(main_head(&b), before);
    assert_eq!(
        task(&b, id)["state"],
        "review",
        "the task waits for another accept"
    );
    // It skipped review, yet waits for one now: the log says so (its done said it would land).
    let log = b.json(&["log", "--limit", "1000"]);
    let waits = log["events"].as_array().unwrap().iter().any(|e| {
        e["task"] == id
            && e["kind"] == "review"
            && e["reason"].as_str().unwrap_or("").contains("did not land")
    });
    assert!(waits, "{log}");
    assert_eq!(
        fs::read_to_string(b.root().join("notes.md")).unwrap(),
        "mine, edited\n",
        "the person's edit is untouched"
    );

    // Committed: the accept lands, and the checkout follows.
    b.git(&["commit", "-q", "-am", "person's edit"]);
    let (landed, code) = board_json(&b, &["accept", &id.to_string()]);
    assert_eq!(code, 0, "{landed}");
    assert!(b.root().join("w.md").exists());
    assert_eq!(
        b.git(&["status", "--porcelain", "--untracked-files=no"]),
        ""
    );

    // With review off, a done lands at once.
    let id = b.add("another file");
    let show = agent_in(
        &b,
        &wt,
        "w",
        &format!(
            "board claim {id} > /dev/null\necho v > v.md && git add v.md\n\
             git commit -q -m 'w adds another'\nboard done {id} --json\n"
        ),
    );
    assert!(show.stdout.contains("\"landed\""), "{show:?}");
    let t = task(&b, id);
    assert_eq!(t["state"], "done", "{t}");
    assert!(is_ancestor(&b, t["commit"].as_str().unwrap(), "main"));
    assert_eq!(t["landed"], main_head(&b).as_str());
}

/// Whether `git worktree list` in the project shows the board's land worktree.
fn land_worktree_listed(b: &TestBoard) -> bool {
    b.git(&["worktree", "list", "--porcelain"])
        .lines()
        .any(|l| l.starts_with("worktree ") && l.ends_with("/.board/land"))
}

#[test]
fn a_stopped_board_leaves_no_land_worktree_in_the_repository_and_a_crashed_ones_is_reused() {
    let mut b = repo("30s", "[git]\nbase = \"main\"\nland = \"merge\"\n");
    let wt = worktree(&b, "w", "main");
    let finish = |b: &TestBoard, file: &str| {
        let id = b.add(file);
        agent_in(
            b,
            &wt,
            "w",
            &format!(
                "board claim {id} > /dev/null\necho {file} > {file} && git add {file}\n\
                 git commit -q -m 'w adds {file}'\nboard done {id} > /dev/null\n"
            ),
        );
        assert_eq!(task(b, id)["state"], "done", "{file} landed");
    };
    finish(&b, "one.md");
    assert!(
        land_worktree_listed(&b),
        "a land prepares in the board's worktree"
    );
    b.stop();
    assert!(
        !land_worktree_listed(&b),
        "{}",
        b.git(&["worktree", "list"])
    );
    assert!(!b.root().join(".board/land").exists());

    // A board that dies leaves it; the next one lands with it and removes it when it stops.
    b.serve();
    finish(&b, "two.md");
    b.kill_serve(nix::sys::signal::Signal::SIGKILL);
    assert!(land_worktree_listed(&b));
    b.serve();
    finish(&b, "three.md");
    b.stop();
    assert!(
        !land_worktree_listed(&b),
        "{}",
        b.git(&["worktree", "list"])
    );
    assert_eq!(b.git(&["show", "main:three.md"]).trim(), "three.md");
}
