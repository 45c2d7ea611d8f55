//! What may come along when a task lands: the task's own earlier work, finished and sent back
//! (a reject), lands with the rework; another task's commit that has not landed (still in
//! review) never rides along into `main` under this task.

use serde_json::Value;

use crate::harness::test_board::TestBoard;
use crate::review_and_land::{agent_in, git_in, is_ancestor, main_head, repo, task, worktree};

const REVIEW_AND_MERGE: &str =
    "[review]\nrequired = true\n\n[git]\nbase = \"main\"\nland = \"merge\"\n";

fn board_json(b: &TestBoard, args: &[&str]) -> (Value, i32) {
    b.board_json(args).json_and_code()
}

#[test]
fn work_sent_back_by_a_reject_lands_with_its_rework() {
    let b = repo("60s", REVIEW_AND_MERGE);
    let id = b.add("write the parser");
    let wt = worktree(&b, "a", "main");
    agent_in(
        &b,
        &wt,
        "a",
        &format!(
            "board claim {id} >/dev/null\necho one > parser.md\ngit add parser.md\n\
             git commit -q -m 'parser, first try'\nboard done {id} >/dev/null"
        ),
    );
    let first = git_in(&b, &wt, &["rev-parse", "HEAD"]);
    let (v, code) = board_json(&b, &["reject", &id.to_string(), "--note", "empty input"]);
    assert_eq!(code, 0, "{v}");

    // The same agent takes it again (generation 2) and builds on its own first try.
    agent_in(
        &b,
        &wt,
        "a",
        &format!(
            "board claim {id} >/dev/null\necho two >> parser.md\n\
             git commit -q -am 'parser handles empty input'\nboard done {id} >/dev/null"
        ),
    );
    let t = task(&b, id);
    assert_eq!(t["state"], "review", "{t}");
    let (v, code) = board_json(&b, &["accept", &id.to_string()]);
    assert_eq!(code, 0, "the rework of a rejected task lands: {v}");
    assert!(is_ancestor(&b, &first, "main"), "the first try landed too");
    let t = task(&b, id);
    assert_eq!(t["state"], "done", "{t}");
}

#[test]
fn another_tasks_unreviewed_commit_never_lands_under_this_one() {
    let b = repo("60s", REVIEW_AND_MERGE);
    let six = b.add("six");
    let seven = b.json(&["add", "seven", "--no-review"])["task"]["id"]
        .as_i64()
        .unwrap();
    let wt = worktree(&b, "w", "main");
    let before = main_head(&b);
    // One agent, one branch: six waits in review, seven (no review) is finished on top of it.
    agent_in(
        &b,
        &wt,
        "w",
        &format!(
            "board claim {six} >/dev/null\necho six > six.md\ngit add six.md\n\
             git commit -q -m 'work on six'\nboard done {six} >/dev/null\n\
             board claim {seven} >/dev/null\necho seven > seven.md\ngit add seven.md\n\
             git commit -q -m 'work on seven'\n\
             code=0; board done {seven} --json > done7.json 2>&1 || code=$?\n\
             echo $code > done7.code"
        ),
    );
    let code = std::fs::read_to_string(wt.join("done7.code")).unwrap();
    let answer = std::fs::read_to_string(wt.join("done7.json")).unwrap();
    assert_eq!(code.trim(), "4", "{answer}");
    assert!(
        answer.contains("Board-Task: 1") || answer.contains(&format!("task {six}")),
        "{answer}"
    );
    assert!(answer.contains("in review"), "{answer}");
    assert_eq!(main_head(&b), before, "main is untouched");
    let six_commit = task(&b, six)["commit"].as_str().unwrap().to_string();
    assert!(!is_ancestor(&b, &six_commit, "main"));

    // Once six is reviewed and landed, seven lands after it.
    let (v, code) = board_json(&b, &["accept", &six.to_string()]);
    assert_eq!(code, 0, "{v}");
    let (v, code) = board_json(&b, &["accept", &seven.to_string()]);
    assert_eq!(code, 0, "{v}");
    let seven_commit = task(&b, seven)["commit"].as_str().unwrap().to_string();
    assert!(is_ancestor(&b, &seven_commit, "main"));
}

#[test]
fn a_done_naming_a_commit_already_on_main_is_refused_and_the_claim_stands() {
    let b = repo("60s", REVIEW_AND_MERGE);
    let id = b.add("forgot to commit");
    let wt = worktree(&b, "n", "main");
    // Nothing committed: the branch's head is main's head.
    agent_in(
        &b,
        &wt,
        "n",
        &format!(
            "board claim {id} >/dev/null\ncode=0; board done {id} --json > done.json 2>&1 || code=$?\n\
             echo $code > done.code\nboard check {id}"
        ),
    );
    let code = std::fs::read_to_string(wt.join("done.code")).unwrap();
    let answer = std::fs::read_to_string(wt.join("done.json")).unwrap();
    assert_eq!(code.trim(), "2", "{answer}");
    assert!(answer.contains("already on main"), "{answer}");
    assert_ne!(task(&b, id)["state"], "review");
}
