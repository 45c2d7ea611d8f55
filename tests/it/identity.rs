//! Two `board run --name claude` sessions at once get distinct ids (`claude`,
//! `claude-2`), and one cannot write to the other's claim, not even by setting `BOARD_AGENT` to
//! the other's id (wrong token → exit 7) or by copying its token too (not in its process tree →
//! exit 7).

use crate::harness::{test_board::frozen, test_board::TestBoard};

#[test]
fn two_sessions_with_one_name_get_distinct_ids_and_cannot_write_each_others_claims() {
    let board = TestBoard::start();
    let task = board.add("refactor the parser");
    let t = task.to_string();

    let mut both = board.agents(&["claude", "claude"]);
    both.sort_by(|a, b| a.id.cmp(&b.id));
    let [mut claude, mut claude2] = <[_; 2]>::try_from(both).ok().unwrap();
    assert_eq!(claude.id, "claude");
    assert_eq!(claude2.id, "claude-2");
    let live = board.json(&["agents"]);
    let ids: Vec<&str> = live["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "both sessions are live at once: {live}");
    assert!(
        ids.contains(&"claude") && ids.contains(&"claude-2"),
        "{live}"
    );

    assert_eq!(claude.claim(task), 1);
    let before = board.show(task);

    // claude-2 with its own identity: the task is someone else's.
    claude2.board(&["done", &t]).expect_code(4);

    // claude-2 pretending to be claude: its own token does not match claude's session.
    for write in [
        format!("board done {t}"),
        format!("board note {t} 'hijacked'"),
        format!("board release {t}"),
        "board renew".to_string(),
    ] {
        let out = claude2.sh(&format!("BOARD_AGENT=claude {write}"));
        assert_eq!(
            out.code, 7,
            "`{write}` as claude with claude-2's token: {out:?}"
        );
        assert!(out.stderr.contains("wrong token"), "{out:?}");
    }

    // claude-2 with claude's id *and* token: the token only works inside claude's process tree.
    let claude_token = claude.sh("printf %s \"$BOARD_TOKEN\"").ok().stdout;
    assert!(
        claude_token.len() >= 32,
        "a 128-bit token: {claude_token:?}"
    );
    let copied = claude2.sh(&format!(
        "BOARD_AGENT=claude BOARD_TOKEN={claude_token} board done {t}"
    ));
    assert_eq!(copied.code, 7, "a copied token must not pass: {copied:?}");
    assert!(copied.stderr.contains("process tree"), "{copied:?}");

    let after = board.show(task);
    assert_eq!(
        frozen(&after["task"]),
        frozen(&before["task"]),
        "nothing changed"
    );
    assert_eq!(after["task"]["holder"], "claude");
    assert_eq!(after["notes"], before["notes"], "no note was added");
    assert!(board.log_of("done", task).is_empty());

    // And the real holder still can.
    assert_eq!(claude.json(&["done", &t])["already"], false);
}

/// Outside every agent's tree, an identity that names an agent (or carries a token) but cannot
/// be proven is refused (exit 7) and changes nothing; it never acts as the operator. Only a
/// caller with neither variable is the operator.
#[test]
fn a_half_identity_outside_every_agent_is_refused_not_taken_for_the_operator() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let board = TestBoard::start();
    let _w = board.agents(&["w"]);
    let not_utf8 = OsStr::from_bytes(b"w\xff");
    let cases: [(&str, &OsStr, &OsStr); 5] = [
        (
            "an agent with an empty token",
            OsStr::new("w"),
            OsStr::new(""),
        ),
        ("an agent without a token", OsStr::new("w"), OsStr::new("")),
        (
            "a token without an agent",
            OsStr::new(""),
            OsStr::new("0123456789abcdef"),
        ),
        (
            "an agent that is not UTF-8",
            not_utf8,
            OsStr::new("0123456789abcdef"),
        ),
        ("a token that is not UTF-8", OsStr::new("w"), not_utf8),
    ];
    for (what, agent, token) in cases {
        let mut cmd = board.board_cmd(&["add", "must not be added"]);
        cmd.env_remove("BOARD_AGENT").env_remove("BOARD_TOKEN");
        if !agent.is_empty() {
            cmd.env("BOARD_AGENT", agent);
        }
        if !token.is_empty() || what.contains("empty") {
            cmd.env("BOARD_TOKEN", token);
        }
        let out = crate::harness::command::run_within(&mut cmd, crate::harness::STEP);
        assert_eq!(out.code, 7, "{what}: {out:?}");
    }
    let tasks = board.json(&["list"]);
    assert_eq!(
        tasks["tasks"],
        serde_json::json!([]),
        "nothing was added: {tasks}"
    );
    board.board(&["add", "the operator's task"]).expect_code(0);
}
