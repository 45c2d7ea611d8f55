//! The fence where the work lands: in a real git repository, an agent whose claim
//! lapsed cannot commit, the holder's commit carries `Board-Task` / `Board-Generation` trailers,
//! and a human's commit is untouched (and the repository's own hook still runs).

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use crate::harness::schema::check_cli;
use crate::harness::test_board::TestBoard;
use serde_json::Value;

/// An agent's shell script with git's test identity.
fn agent_script(body: &str) -> String {
    format!(
        "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
         GIT_AUTHOR_NAME=Agent GIT_AUTHOR_EMAIL=a@example.invalid \
         GIT_COMMITTER_NAME=Agent GIT_COMMITTER_EMAIL=a@example.invalid\n{body}"
    )
}

fn repo() -> TestBoard {
    // A short lease so a silent agent's claim lapses within a second.
    let p = TestBoard::builder().lease("1s").sweep("100ms").unserved();
    p.git(&["init", "-q", "-b", "main"]);
    std::fs::write(p.root().join(".gitignore"), ".board/\n*.txt\nfifo\n").unwrap();
    p.git(&["add", ".gitignore", "board.toml"]);
    p.git(&["commit", "-q", "-m", "start"]);
    p
}

fn last_message(p: &TestBoard) -> String {
    p.git(&["log", "-1", "--format=%B"])
}

#[test]
fn hooks_install_idempotently_and_chain_the_existing_hook() {
    let p = repo();
    let hooks = p.root().join(".git/hooks");
    let theirs = "#!/bin/sh\necho \"$@\" >> chained.txt\n";
    std::fs::write(hooks.join("pre-commit"), theirs).unwrap();
    std::fs::set_permissions(
        hooks.join("pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();

    let (first, code) = p.board_json(&["init", "--git-hooks"]).json_and_code();
    assert_eq!(code, 0, "{first}");
    check_cli("init", code, &first);
    let (second, code) = p.board_json(&["init", "--git-hooks"]).json_and_code();
    assert_eq!(code, 0, "{second}");
    check_cli("init", code, &second);
    for h in second["git_hooks"]["hooks"].as_array().unwrap() {
        assert_eq!(h["action"], "unchanged", "{second}");
    }
    let chained = hooks.join("pre-commit.board-chained");
    assert_eq!(std::fs::read_to_string(&chained).unwrap(), theirs);
    assert_eq!(
        first["git_hooks"]["hooks"][0]["chained"],
        Value::String(chained.display().to_string())
    );
    let ours = std::fs::read_to_string(hooks.join("pre-commit")).unwrap();
    assert!(ours.contains(
        std::path::Path::new(crate::harness::BOARD)
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()
    ));

    // A human's commit: allowed, no trailers, and the repository's own hook ran.
    std::fs::write(p.root().join("human.md"), "by hand\n").unwrap();
    p.git(&["add", "human.md"]);
    p.git(&["commit", "-q", "-m", "human work"]);
    assert_eq!(last_message(&p).trim(), "human work");
    assert!(p.root().join("chained.txt").exists(), "chained hook ran");

    // Outside a git repository it is a usage error.
    let q = TestBoard::builder().unserved();
    let (err, code) = q.board_json(&["init", "--git-hooks"]).json_and_code();
    assert_eq!(code, 2, "{err}");
    check_cli("init", code, &err);
}

#[test]
fn a_lapsed_agent_cannot_commit_and_the_holder_commit_carries_trailers() {
    let p = repo();
    let (_, code) = p.board_json(&["init", "--git-hooks"]).json_and_code();
    assert_eq!(code, 0);
    p.board_json(&["add", "holder's task"]);
    p.board_json(&["add", "lapsing task"]);

    // The holder claims and commits within its lease.
    let holder = agent_script(
        "set -e\nboard claim 1 --json > claim1.txt\n\
         echo one > one.md && git add one.md && git commit -q -m 'holder work'",
    );
    let out = p.board(&["run", "--name", "holder", "--", "sh", "-c", &holder]);
    assert!(out.success(), "holder: {out:?}");
    let claim: Value =
        serde_json::from_str(&std::fs::read_to_string(p.root().join("claim1.txt")).unwrap())
            .unwrap();
    let msg = last_message(&p);
    assert!(msg.starts_with("holder work\n"), "{msg}");
    assert!(msg.contains("\nBoard-Task: 1\n"), "{msg}");
    assert!(
        msg.contains(&format!("\nBoard-Generation: {}\n", claim["generation"])),
        "{msg}"
    );

    // The other agent claims task 2, then goes silent (blocked on a fifo: no CPU, no calls)
    // until its lease lapses; then it tries to commit, three ways.
    let fifo = p.root().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut lapsing = p
        .command(crate::harness::BOARD)
        .args(["run", "--name", "lapsing", "--", "sh", "-c"])
        .arg(agent_script(
            "board claim 2 --json > claim2.txt\n\
             read go < fifo\n\
             echo two > two.md && git add two.md\n\
             git commit -q -m 'lapsed work' 2> plain.err; echo $? > plain.rc\n\
             BOARD_TASK=2 git commit -q -m 'lapsed work' 2> task.err; echo $? > task.rc\n\
             git commit --no-verify -q -m 'lapsed work' 2> noverify.err; echo $? > noverify.rc\n",
        ))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    crate::harness::poll(std::time::Duration::from_secs(10), || {
        let text = std::fs::read_to_string(p.root().join("claim2.txt")).ok()?;
        serde_json::from_str::<Value>(&text).ok()
    })
    .expect("the second claim did not happen in time");
    crate::harness::poll(std::time::Duration::from_secs(10), || {
        let (show, _) = p.board_json(&["show", "2"]).json_and_code();
        show["events"]
            .as_array()?
            .iter()
            .any(|e| e["kind"] == "lapse")
            .then_some(())
    })
    .expect("the silent agent's claim to lapse did not happen in time");
    std::fs::write(&fifo, "go\n").unwrap();
    let status = crate::harness::poll(std::time::Duration::from_secs(20), || {
        lapsing.try_wait().unwrap()
    })
    .expect("the lapsed agent to finish did not happen in time");
    assert!(status.success(), "{status:?}");

    let read = |f: &str| std::fs::read_to_string(p.root().join(f)).unwrap();
    for attempt in ["plain", "task", "noverify"] {
        let rc = read(&format!("{attempt}.rc"));
        assert_ne!(rc.trim(), "0", "{attempt} commit went through");
        let err = read(&format!("{attempt}.err"));
        assert!(err.contains("commit refused"), "{attempt}: {err}");
        assert!(err.contains("lapsing"), "{attempt} names the agent: {err}");
    }
    assert!(
        read("plain.err").contains("holds no live claim"),
        "{}",
        read("plain.err")
    );
    let task_err = read("task.err");
    assert!(
        task_err.contains("your claim on task 2") && task_err.contains("lease expired"),
        "the lapsed message says what ended: {task_err}"
    );
    let log = p.git(&["log", "--format=%s"]);
    assert!(!log.contains("lapsed work"), "{log}");

    // A human commits the same change: untouched by the fence, no trailers.
    p.git(&["commit", "-q", "-m", "human takes over"]);
    assert_eq!(last_message(&p).trim(), "human takes over");
}
