//! `board import` turns a nested Markdown plan into tasks (a parent waits for the items nested
//! under it) in one transaction; `board export` writes a file that imports into a new board as
//! the same backlog, in every format.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::harness::test_board::TestBoard;

/// A 30-item plan: 5 features, each with 2 parts of 1 step each (25 items), and 5 chores.
fn plan() -> String {
    let mut md = String::from("# Ship the link shortener\n\nA plan, written by a person.\n\n");
    for f in 1..=5 {
        md.push_str(&format!("- [ ] Feature {f}\n"));
        for p in 1..=2 {
            let done = if f == 1 && p == 1 { "x" } else { " " };
            md.push_str(&format!("  - [{done}] Feature {f} part {p}\n"));
            md.push_str(&format!("    Notes on part {p} of feature {f}.\n"));
            md.push_str(&format!("    - [ ] Feature {f} part {p} step\n"));
        }
    }
    md.push_str("\n## Chores\n\n");
    for c in 1..=4 {
        md.push_str(&format!("* [ ] Chore {c} <!-- priority={c} -->\n"));
    }
    md.push_str("* [ ] Chore 5: after feature 1 <!-- after=f1 key=c5 -->\n");
    // The explicit key names the first feature: rewrite its line.
    md.replacen("- [ ] Feature 1\n", "- [ ] Feature 1 <!-- key=f1 -->\n", 1)
}

fn by_title(b: &TestBoard) -> BTreeMap<String, Value> {
    b.json(&["list"])["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["title"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

#[test]
fn a_nested_markdown_plan_becomes_tasks_with_nesting_as_dependencies() {
    let b = TestBoard::start();
    let file = b.scratch().join("plan.md");
    std::fs::write(&file, plan()).unwrap();
    let out = b.board(&["import", file.to_str().unwrap()]).ok();
    assert!(out.stdout.contains("imported 30 tasks"), "{out:?}");

    let tasks = by_title(&b);
    assert_eq!(tasks.len(), 30);
    let id = |t: &str| tasks[t]["id"].as_i64().unwrap();
    let after = |t: &str| -> Vec<i64> {
        let mut v: Vec<i64> = tasks[t]["after"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        v.sort();
        v
    };
    for f in 1..=5 {
        let feature = format!("Feature {f}");
        assert_eq!(
            after(&feature),
            vec![
                id(&format!("{feature} part 1")),
                id(&format!("{feature} part 2"))
            ],
            "a parent waits for its children"
        );
        for p in 1..=2 {
            let part = format!("{feature} part {p}");
            assert_eq!(after(&part), vec![id(&format!("{part} step"))]);
            assert_eq!(
                tasks[&part]["body"],
                format!("Notes on part {p} of feature {f}.")
            );
            assert!(
                after(&format!("{part} step")).is_empty(),
                "leaves wait for nothing"
            );
        }
    }
    assert_eq!(tasks["Feature 1 part 1"]["state"], "done");
    assert_eq!(tasks["Chore 3"]["priority"], 3);
    assert_eq!(after("Chore 5: after feature 1"), vec![id("Feature 1")]);
    assert_eq!(b.json(&["goal"])["goal"]["text"], "Ship the link shortener");
    // Only the leaves (and the chores) are ready.
    let ready: Vec<i64> = b.ready_ids();
    assert_eq!(ready.len(), 10 + 4, "the 10 steps and 4 chores: {ready:?}");
    assert_eq!(b.log_kind("add").len(), 30);
}

#[test]
fn export_then_import_into_a_new_board_gives_the_same_backlog() {
    let a = TestBoard::start();
    let file = a.scratch().join("plan.md");
    std::fs::write(&file, plan()).unwrap();
    a.board(&["import", file.to_str().unwrap()]).ok();
    for format in ["md", "toml", "json"] {
        let exported = a.board(&["export", "--format", format]).ok().stdout;
        let copy = TestBoard::start();
        let f = copy.scratch().join(format!("backlog.{format}"));
        std::fs::write(&f, &exported).unwrap();
        copy.board(&["import", f.to_str().unwrap()]).ok();
        let again = copy.board(&["export", "--format", format]).ok().stdout;
        assert_eq!(again, exported, "{format} round trip");
        assert_eq!(
            copy.json(&["export"]),
            a.json(&["export"]),
            "{format}: the same tasks, dependencies, states and goal"
        );
    }
}

#[test]
fn a_bad_file_imports_nothing_and_names_the_problem() {
    let b = TestBoard::start();
    b.add("already here");
    let file = b.scratch().join("bad.md");
    std::fs::write(
        &file,
        "- [ ] fine\n- [ ] waits for a ghost <!-- after=ghost -->\n",
    )
    .unwrap();
    let out = b.board(&["import", file.to_str().unwrap()]).expect_code(2);
    assert!(out.stderr.contains("\"ghost\""), "{out:?}");
    let file = b.scratch().join("bad.toml");
    std::fs::write(
        &file,
        "[[tasks]]\nkey = \"a\"\ntitle = \"a\"\nafter = [\"b\"]\n\n[[tasks]]\nkey = \"b\"\ntitle = \"b\"\nafter = [\"a\"]\n",
    )
    .unwrap();
    let out = b.board(&["import", file.to_str().unwrap()]).expect_code(2);
    assert!(out.stderr.contains("waits for itself"), "{out:?}");
    // A backlog the board refuses as a whole (a title over the limit): nothing of it lands.
    let big = "x".repeat(20 * 1024);
    let file = b.scratch().join("big.json");
    std::fs::write(
        &file,
        format!(r#"{{"tasks":[{{"key":"a","title":"ok"}},{{"key":"b","title":"{big}"}}]}}"#),
    )
    .unwrap();
    b.board(&["import", file.to_str().unwrap()]).expect_code(2);
    assert_eq!(by_title(&b).len(), 1, "only the task from before");
}

#[test]
fn an_import_that_replaces_the_goal_says_so_and_names_the_previous_one() {
    let b = TestBoard::start();
    b.board(&["goal", "Keep the old API"]).ok();
    let file = b.scratch().join("plan.md");
    std::fs::write(&file, "# Ship the new API\n\n- [ ] write it\n").unwrap();
    let out = b.board(&["import", file.to_str().unwrap()]).ok();
    assert!(
        out.stdout
            .contains("replacing the previous goal \"Keep the old API\""),
        "{out:?}"
    );
    let json = b
        .board_json(&["import", file.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(
        json["goal_set"], false,
        "the same goal again is left alone: {json}"
    );
    assert_eq!(json["replaced_goal"], Value::Null, "{json}");
    assert_eq!(b.json(&["goal"])["goal"]["text"], "Ship the new API");
}
