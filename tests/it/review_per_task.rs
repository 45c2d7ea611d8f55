//! A task's own review override, in real git repositories: `board add --review` makes its
//! `done` wait in review on a board that does not review, `--no-review` lands it at once on a
//! board that does; `board show` says so, `edit` changes it, and import/export carry it as
//! `review=yes|no`.

use std::fs;

use crate::harness::test_board::TestBoard;
use crate::review_and_land::{agent_in, is_ancestor, main_head, repo, task, worktree};

/// `board --json add TITLE FLAG`: the new task's id.
fn add_with(b: &TestBoard, title: &str, flag: &str) -> i64 {
    b.json(&["add", title, flag])["task"]["id"]
        .as_i64()
        .expect("task id")
}

/// A shell agent `w` in `wt` claims `id`, commits FILE and finishes with `board done`.
fn finish_with_commit(b: &TestBoard, wt: &std::path::Path, id: i64, file: &str) {
    agent_in(
        b,
        wt,
        "w",
        &format!(
            "board claim {id} > /dev/null\necho {file} > {file} && git add {file}\n\
             git commit -q -m 'w adds {file}'\nboard done {id} > /dev/null\n"
        ),
    );
}

#[test]
fn a_review_task_waits_in_review_on_a_board_that_lands_without_review() {
    let b = repo("30s", "[git]\nbase = \"main\"\nland = \"merge\"\n");
    let reviewed = add_with(&b, "a change a person checks", "--review");
    let plain = b.add("a routine change");
    let wt = worktree(&b, "w", "main");

    let t = task(&b, reviewed);
    assert_eq!(t["review"], true, "{t}");
    let shown = b.board(&["show", &reviewed.to_string()]);
    assert!(
        shown.stdout.contains("review: its done waits for a person"),
        "{shown:?}"
    );

    let before = main_head(&b);
    finish_with_commit(&b, &wt, reviewed, "one.md");
    let t = task(&b, reviewed);
    assert_eq!(t["state"], "review", "it waits for a person: {t}");
    assert_eq!(t["landed"], serde_json::Value::Null, "{t}");
    assert_eq!(main_head(&b), before, "main untouched until it is accepted");

    // From a branch of its own: on `w`'s branch it would carry the reviewed task's commit,
    // which must not reach main before a person accepts it.
    let wt2 = worktree(&b, "w2", "main");
    finish_with_commit(&b, &wt2, plain, "two.md");
    let t = task(&b, plain);
    assert_eq!(
        t["state"], "done",
        "a task without --review lands at once: {t}"
    );
    assert_eq!(t["review"], serde_json::Value::Null, "{t}");
    assert!(is_ancestor(&b, t["commit"].as_str().unwrap(), "main"));

    let (accepted, code) = b
        .board_json(&["accept", &reviewed.to_string()])
        .json_and_code();
    assert_eq!(code, 0, "{accepted}");
    assert_eq!(task(&b, reviewed)["state"], "done");
    assert!(b.root().join("one.md").exists() && b.root().join("two.md").exists());
}

#[test]
fn a_no_review_task_lands_at_once_on_a_board_that_requires_review_and_edit_changes_it() {
    let b = repo(
        "30s",
        "[review]\nrequired = true\n\n[git]\nbase = \"main\"\nland = \"merge\"\n",
    );
    let skip = add_with(&b, "a typo fix", "--no-review");
    let other = b.add("a feature");
    let wt = worktree(&b, "w", "main");
    assert!(b
        .board(&["show", &skip.to_string()])
        .stdout
        .contains("review: its done skips review"));

    finish_with_commit(&b, &wt, skip, "typo.md");
    let t = task(&b, skip);
    assert_eq!(t["state"], "done", "{t}");
    assert_eq!(t["landed"], main_head(&b).as_str(), "{t}");

    // An edit turns review off for the other task too; a task without one waits as the board says.
    assert!(b
        .board(&["edit", &other.to_string(), "--no-review"])
        .success());
    assert_eq!(task(&b, other)["review"], false);
    assert!(b.board(&["edit", &other.to_string(), "--review"]).success());
    assert_eq!(task(&b, other)["review"], true);
    let both = b.board(&["edit", &other.to_string(), "--review", "--no-review"]);
    assert!(
        !both.success(),
        "--review with --no-review is refused: {both:?}"
    );
    finish_with_commit(&b, &wt, other, "feature.md");
    assert_eq!(task(&b, other)["state"], "review");
}

#[test]
fn import_and_export_carry_a_tasks_review_override() {
    let b = TestBoard::start();
    let file = b.scratch().join("plan.md");
    fs::write(
        &file,
        "- [ ] Check by a person <!-- review=yes -->\n\
         - [ ] Skip review <!-- review=no -->\n\
         - [ ] As the board says\n",
    )
    .unwrap();
    b.board(&["import", file.to_str().unwrap()]).ok();
    assert_eq!(b.task(1)["review"], true);
    assert_eq!(b.task(2)["review"], false);
    assert_eq!(b.task(3)["review"], serde_json::Value::Null);
    let md = b.board(&["export", "--format", "md"]).ok().stdout;
    assert!(md.contains("Check by a person <!-- review=yes -->"), "{md}");
    assert!(md.contains("Skip review <!-- review=no -->"), "{md}");

    let bad = b.scratch().join("bad.md");
    fs::write(&bad, "- [ ] x <!-- review=maybe -->\n").unwrap();
    let out = b.board(&["import", bad.to_str().unwrap()]).expect_code(2);
    assert!(out.text().contains("review=yes or review=no"), "{out:?}");
    assert_eq!(
        b.json(&["list"])["tasks"].as_array().unwrap().len(),
        3,
        "nothing imported"
    );
}

/// The kinds of the events of task `id` in the board's log, oldest first.
fn kinds_of(b: &TestBoard, id: i64) -> Vec<String> {
    b.json(&["log", "--limit", "1000"])["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["task"] == id)
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_task_that_lands_at_once_logs_its_done_and_land_but_never_a_wait_for_review() {
    let b = repo("30s", "[git]\nbase = \"main\"\nland = \"merge\"\n");
    let plain = b.add("a routine change");
    let reviewed = add_with(&b, "a change a person checks", "--review");
    let wt = worktree(&b, "w", "main");
    finish_with_commit(&b, &wt, plain, "one.md");
    assert_eq!(task(&b, plain)["state"], "done");
    let kinds = kinds_of(&b, plain);
    assert!(
        !kinds.contains(&"review".into()),
        "it never waited: {kinds:?}"
    );
    for kind in ["grant", "done", "land"] {
        assert!(kinds.contains(&kind.into()), "{kind} missing: {kinds:?}");
    }
    let log = b.json(&["log", "--limit", "1000"]);
    let done = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["task"] == plain && e["kind"] == "done")
        .unwrap();
    assert_eq!(done["generation"], 1, "{done}");
    assert!(done["agent"].is_string(), "the holder finished it: {done}");

    // A task that does wait says so, once.
    let wt2 = worktree(&b, "w2", "main");
    finish_with_commit(&b, &wt2, reviewed, "two.md");
    assert_eq!(task(&b, reviewed)["state"], "review");
    let kinds = kinds_of(&b, reviewed);
    assert_eq!(
        kinds.iter().filter(|k| *k == "review").count(),
        1,
        "{kinds:?}"
    );
    assert!(!kinds.contains(&"done".into()), "{kinds:?}");
}
