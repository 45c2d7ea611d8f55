//! Labels and assignment: a task added `--for` an agent name or role is granted by claim-next
//! only to that agent or an agent with that role, a claim of it by id from anyone else exits 3
//! naming whom it is for, and `--label` filters list, ready and claim. Bad labels are refused
//! with an error naming them, changing nothing.

use serde_json::Value;

use crate::harness::test_board::TestBoard;

fn ids(v: &Value) -> Vec<i64> {
    v["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("no tasks in {v}"))
        .iter()
        .map(|t| t["id"].as_i64().expect("task id"))
        .collect()
}

fn added(board: &TestBoard, args: &[&str]) -> i64 {
    let mut all = vec!["add"];
    all.extend_from_slice(args);
    board.json(&all)["task"]["id"].as_i64().expect("task id")
}

#[test]
fn a_task_for_the_reviewer_is_never_granted_to_another_agent_over_100_claim_next_rounds() {
    let board = TestBoard::start();
    let review = added(
        &board,
        &["review the parser", "--for", "reviewer", "-p", "9"],
    );
    let chore = added(&board, &["tidy the README"]);
    let mut coder = board.agent("coder");
    for round in 0..100 {
        let got = coder.json(&["claim"]);
        assert_eq!(got["task"]["id"], chore, "round {round}: {got}");
        coder.board(&["release", &chore.to_string()]).ok();
    }
    assert!(
        board.log_of("grant", review).is_empty(),
        "the reviewer's task was granted to someone"
    );

    let refused = coder
        .board_json(&["claim", &review.to_string()])
        .expect_code(3);
    let e = refused.json();
    assert_eq!(e["data"]["for"], "reviewer", "{e}");
    let human = coder.board(&["claim", &review.to_string()]).expect_code(3);
    assert!(human.text().contains("reviewer"), "{human:?}");

    let mut checker = board.agent_with_role("checker", "reviewer");
    let got = checker.json(&["claim"]);
    assert_eq!(
        got["task"]["id"], review,
        "the reviewer role gets it first: {got}"
    );
    assert_eq!(board.log_of("grant", review).len(), 1);
}

#[test]
fn a_task_for_an_agent_name_goes_to_that_agent_and_can_be_given_to_anyone_again() {
    let board = TestBoard::start();
    let task = added(&board, &["only for ada", "--for", "ada"]);
    let mut bob = board.agent("bob");
    bob.board(&["claim"]).expect_code(3);
    assert_eq!(board.task(task)["for"], "ada");
    board.json(&["edit", &task.to_string(), "--for-anyone"]);
    assert!(board.task(task)["for"].is_null());
    assert_eq!(bob.json(&["claim"])["task"]["id"], task);
}

#[test]
fn label_filters_list_ready_and_claim() {
    let board = TestBoard::start();
    let ui = added(
        &board,
        &["restyle the header", "--label", "ui", "--label", "css"],
    );
    let api = added(&board, &["add the endpoint", "--label", "api", "-p", "5"]);
    let both = added(
        &board,
        &["wire the form", "--label", "ui", "--label", "api"],
    );

    assert_eq!(ids(&board.json(&["list", "--label", "ui"])), vec![ui, both]);
    assert_eq!(
        ids(&board.json(&["ready", "--label", "api"])),
        vec![api, both]
    );
    let human = board.board(&["list", "--label", "css"]).ok();
    assert!(human.stdout.contains("labels ui,css"), "{human:?}");
    assert!(!human.stdout.contains("endpoint"), "{human:?}");

    let mut a = board.agent("a");
    let got = a.json(&["claim", "--label", "ui"]);
    assert_eq!(
        got["task"]["id"], ui,
        "the best ready task with the label: {got}"
    );
    let got = a.json(&["claim", "--label", "ui"]);
    assert_eq!(got["task"]["id"], both);
    a.board(&["claim", "--label", "ui"]).expect_code(3);
    assert_eq!(board.task(api)["state"], "open");

    board.json(&["edit", &api.to_string(), "--label", "backend"]);
    assert_eq!(board.task(api)["labels"], serde_json::json!(["backend"]));
    board.json(&["edit", &api.to_string(), "--no-labels"]);
    assert_eq!(board.task(api)["labels"], serde_json::json!([]));
}

#[test]
fn a_bad_label_is_refused_naming_it_and_nothing_changes() {
    let board = TestBoard::start();
    let task = added(&board, &["t", "--label", "ok"]);
    for bad in ["has space", "a,b", "", "bell\u{7}", &"x".repeat(65)] {
        let out = board
            .board(&["edit", &task.to_string(), "--label", bad])
            .expect_code(2);
        assert!(out.text().contains("label"), "{bad:?}: {out:?}");
        board.board(&["add", "new", "--label", bad]).expect_code(2);
    }
    assert_eq!(board.task(task)["labels"], serde_json::json!(["ok"]));
    assert_eq!(ids(&board.json(&["list"])), vec![task], "no task was added");
}

#[test]
fn import_and_export_carry_labels_and_whom_a_task_is_for() {
    let board = TestBoard::start();
    let file = board.scratch().join("plan.md");
    std::fs::write(
        &file,
        "- [ ] Review the parser <!-- labels=review,parser for=reviewer -->\n\
         - [ ] Tidy <!-- labels=chore -->\n",
    )
    .unwrap();
    board.board(&["import", file.to_str().unwrap()]).ok();
    let review = board.task(1);
    assert_eq!(review["labels"], serde_json::json!(["review", "parser"]));
    assert_eq!(review["for"], "reviewer");
    assert_eq!(ids(&board.json(&["list", "--label", "chore"])), vec![2]);

    let md = board.board(&["export", "--format", "md"]).ok().stdout;
    assert!(md.contains("labels=review,parser for=reviewer"), "{md}");
    let copy = TestBoard::start();
    let again = copy.scratch().join("again.md");
    std::fs::write(&again, &md).unwrap();
    copy.board(&["import", again.to_str().unwrap()]).ok();
    assert_eq!(copy.json(&["export"]), board.json(&["export"]));

    let bad = board.scratch().join("bad.md");
    std::fs::write(&bad, "- [ ] x <!-- labels=ok,bad\u{7}label -->\n").unwrap();
    let out = board
        .board(&["import", bad.to_str().unwrap()])
        .expect_code(2);
    assert!(out.text().contains("label"), "{out:?}");
    assert_eq!(
        ids(&board.json(&["list"])),
        vec![1, 2],
        "nothing was imported"
    );
}
