//! Review in the TUI, end to end: two shell agents under `board up`, each in its own worktree,
//! finish a task with a commit on a board with `[review] required = true` and `land = "merge"`;
//! a person in `board tui` (real tmux) sees both reviews, opens each one's diff (stat and patch)
//! and accepts it with `y` and a note; both commits land on `main` with their trailers.

use std::fs;
use std::time::Duration;

use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;
use crate::harness::*;
use crate::review_and_land::{committer_script, is_ancestor, main_head, task, LAND_WAIT};
use crate::tui_in_tmux::{start_tui, wait_live, TUI};

/// A git project whose two `board up` agents `a` and `b` (worktrees) each claim, commit and
/// finish a task (1 and 2) into review; returns once both did.
fn two_reviews() -> TestBoard {
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
    b.board(&["add", "Write a's notes"]).ok();
    b.board(&["add", "Write b's notes"]).ok();
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
    b
}

/// Opens the selected task's details and waits for its diff: the stat line of `file` and the
/// patch line `+work of NAME`.
fn open_diff(tmux: &Tmux, file: &str, name: &str) -> String {
    tmux.keys(TUI, &["Enter"]);
    let patch = format!("+work of {name}");
    tmux.wait_screen(
        TUI,
        &[],
        &format!("the diff of {file}"),
        Duration::from_secs(20),
        |s| s.contains(&format!("{file} |")) && s.contains(&patch),
    )
}

#[test]
fn two_agents_finish_into_review_and_a_person_accepts_both_in_the_tui_and_both_land() {
    if Tmux::missing() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let mut b = two_reviews();
    let before = main_head(&b);
    let tmux = start_tui(&mut b, "");
    wait_live(&tmux);
    // Both reviews are listed, each with the agent that finished it.
    tmux.wait_screen(TUI, &[], "both reviews", Duration::from_secs(10), |s| {
        s.contains("REVIEW 2") && s.contains("Write a's notes") && s.contains("Write b's notes")
    });
    // Only the tasks in review, so the selection lands on one of them.
    tmux.keys(TUI, &["/"]);
    tmux.type_text(TUI, "review");
    tmux.keys(TUI, &["Enter"]);

    let mut accepted = Vec::new();
    for round in 0..2 {
        let screen = tmux.wait_screen(TUI, &[], "a task in review", Duration::from_secs(10), |s| {
            s.contains(&format!("REVIEW {}", 2 - round))
        });
        // The selected row is marked `›`: which task it is decides which diff to expect.
        let selected = screen
            .lines()
            .find(|l| l.trim_start().starts_with('›'))
            .unwrap_or_else(|| panic!("a selected row:\n{screen}"))
            .to_string();
        let (id, name) = if selected.contains("Write a's notes") {
            (1, "a")
        } else {
            (2, "b")
        };
        open_diff(&tmux, &format!("{name}.md"), name);
        tmux.keys(TUI, &["y"]);
        tmux.wait_screen(TUI, &[], "the accept form", Duration::from_secs(5), |s| {
            s.contains(&format!("Accept #{id}"))
        });
        tmux.type_text(TUI, &format!("looks right, {name}"));
        tmux.keys(TUI, &["Enter"]);
        let done = poll_until(Duration::from_secs(60), || task(&b, id)["state"] == "done");
        assert!(done, "task {id} accepted: {}", task(&b, id));
        accepted.push(id);
    }
    accepted.sort_unstable();
    assert_eq!(accepted, vec![1, 2]);

    let log = b.git(&["log", "main", "--format=%B"]);
    for id in [1_i64, 2] {
        let t = task(&b, id);
        let commit = t["commit"].as_str().unwrap_or_else(|| panic!("{t}"));
        assert!(is_ancestor(&b, commit, "main"), "task {id} landed: {t}");
        assert!(
            t["landed"]
                .as_str()
                .is_some_and(|l| is_ancestor(&b, l, "main")),
            "{t}"
        );
        assert!(log.contains(&format!("Board-Task: {id}")), "{log}");
        let notes = b.show(id)["notes"].clone();
        assert!(
            notes.as_array().into_iter().flatten().any(|n| n["text"]
                .as_str()
                .is_some_and(|x| x.starts_with("looks right"))),
            "the accept's note is kept: {notes}"
        );
    }
    assert!(is_ancestor(&b, &before, "main"), "main was never rewound");
}
