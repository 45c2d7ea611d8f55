//! Identity by process ancestry: a process started inside an agent's tree with a cleaned
//! environment (only `HOME` and `PATH`, as MCP hosts start their servers) is that agent; the same
//! program outside every agent's tree is the operator; a token of another session inside a tree is
//! refused (exit 7); an identity without a token inside a tree is that tree's agent or refused,
//! never the operator.

use crate::harness::{sh_quote, STEP};

use crate::harness::agent::Agent;
use crate::harness::mcp::Mcp;
use crate::harness::process::{fifo_rw, mkfifo};
use crate::harness::test_board::TestBoard;
use serde_json::{json, Value};

/// A command line that runs `board ARGS` with only HOME and PATH in its environment.
fn bare(args: &str) -> String {
    format!("env -i HOME=\"$HOME\" PATH=\"$PATH\" board {args}")
}

/// What a `hello` sent through `board json`, run in `agent` with `env` before it, reports.
fn caller_of(agent: &mut Agent, env: &str) -> Out2 {
    let hello = r#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#;
    let out = agent.sh(&format!(
        "printf '%s\\n' {} | {env} board json",
        sh_quote(hello)
    ));
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null);
    Out2 {
        caller: v["result"]["caller"].as_str().map(String::from),
        error: v.get("error").cloned(),
    }
}

#[derive(Debug)]
struct Out2 {
    caller: Option<String>,
    error: Option<Value>,
}

#[test]
fn a_bare_cli_inside_an_agent_is_that_agent_and_outside_is_the_operator() {
    let board = TestBoard::start();
    let t1 = board.add("first").to_string();
    let mut a = board.agent("alpha");

    let claimed = a.sh(&bare(&format!("--json claim {t1}"))).ok().json();
    assert_eq!(claimed["task"]["holder"], a.id.as_str(), "{claimed}");
    let generation = claimed["generation"].as_i64().expect("generation");
    let done = a
        .sh(&bare(&format!(
            "--json done {t1} --generation {generation}"
        )))
        .ok()
        .json();
    assert_eq!(done["task"]["state"], "done", "{done}");
    assert_eq!(board.task(t1.parse().unwrap())["holder"], Value::Null);

    // The same command outside every agent's tree is the operator: it cannot claim.
    let t2 = board.add("second").to_string();
    let outside = board.board_json(&["claim", &t2]).expect_code(7);
    assert!(outside.stdout.contains("agent identity"), "{outside:?}");
    assert_eq!(board.rpc().result("hello", json!({}))["caller"], "operator");

    // A helper that double-forked away from the agent (re-parented to the launcher, a child
    // subreaper) is still the agent.
    let orphan = a.sh(&format!(
        "(sh -c {} > \"$ctl/orphan.out\" 2>&1 &) ; echo spawned",
        sh_quote(&bare(&format!("--json claim {t2}")))
    ));
    assert_eq!(orphan.code, 0, "{orphan:?}");
    let held = crate::harness::poll(STEP, || {
        let t = board.task(t2.parse().unwrap());
        t["holder"].as_str().map(String::from)
    });
    assert_eq!(held.as_deref(), Some(a.id.as_str()));
}

#[test]
fn another_sessions_token_inside_a_tree_is_refused() {
    let board = TestBoard::start();
    let t = board.add("contested").to_string();
    let mut both = board.agents(&["alpha", "beta"]);
    both.sort_by(|x, y| x.id.cmp(&y.id));
    let [mut a, mut b] = <[_; 2]>::try_from(both).ok().unwrap();
    let b_token = b.sh("printf %s \"$BOARD_TOKEN\"").ok().stdout;

    // B's full identity, used inside A's tree.
    let forged = a.sh(&format!(
        "BOARD_AGENT={} BOARD_TOKEN={b_token} board claim {t}",
        b.id
    ));
    assert_eq!(forged.code, 7, "{forged:?}");
    assert!(forged.stderr.contains("process tree"), "{forged:?}");
    // B's token under A's name.
    let mixed = a.sh(&format!("BOARD_TOKEN={b_token} board claim {t}"));
    assert_eq!(mixed.code, 7, "{mixed:?}");
    assert!(mixed.stderr.contains("wrong token"), "{mixed:?}");
    assert_eq!(board.task(t.parse().unwrap())["holder"], Value::Null);
    assert_eq!(b.claim(t.parse().unwrap()), 1);
}

#[test]
fn an_identity_without_a_token_inside_a_tree_is_never_the_operator() {
    let board = TestBoard::start();
    let mut a = board.agent("alpha");
    let me = a.id.clone();

    // A name without a token that is not this tree's: refused, never the operator (nor the
    // tree's agent: a name that cannot be proven is not quietly replaced).
    for env in [
        "BOARD_AGENT=x BOARD_TOKEN=",
        "env -u BOARD_TOKEN BOARD_AGENT=x",
        "env -i HOME=\"$HOME\" PATH=\"$PATH\" BOARD_AGENT=x BOARD_TOKEN=",
    ] {
        let seen = caller_of(&mut a, env);
        assert!(seen.caller.is_none(), "{env}: {seen:?}");
        let t = board.add("not for a made-up name");
        let out = a.sh(&format!("{env} board --json claim {t}"));
        assert_eq!(out.code, 7, "{env}: {out:?}");
        assert_eq!(board.task(t)["holder"], Value::Null, "{env}");
    }

    // This tree's own name without a token (a CLI that strips the token): the tree decides.
    for env in [
        format!("env -u BOARD_TOKEN BOARD_AGENT={me}"),
        format!("env -i HOME=\"$HOME\" PATH=\"$PATH\" BOARD_AGENT={me} BOARD_TOKEN="),
        "env -i HOME=\"$HOME\" PATH=\"$PATH\"".to_string(),
    ] {
        let seen = caller_of(&mut a, &env);
        assert!(seen.error.is_none(), "{env}: {seen:?}");
        assert_eq!(seen.caller.as_deref(), Some(me.as_str()), "{env}: {seen:?}");
        let t = board.add("for the tree's agent");
        let out = a.sh(&format!("{env} board --json claim {t}"));
        assert_eq!(out.code, 0, "{env}: {out:?}");
        assert_eq!(board.task(t)["holder"], me.as_str(), "{env}");
    }

    // Sent on the wire without a token: this tree's own name passes, another name is refused.
    let mut rpc_line = |params: Value| {
        let req = json!({"jsonrpc":"2.0","id":1,"method":"hello","params": params});
        let out = a.sh(&format!(
            "printf '%s\\n' {} | env -i HOME=\"$HOME\" PATH=\"$PATH\" board json",
            sh_quote(&req.to_string())
        ));
        serde_json::from_str::<Value>(out.stdout.trim()).expect("one response")
    };
    let own = rpc_line(json!({"agent": me}));
    assert_eq!(own["result"]["caller"], me.as_str(), "{own}");
    for params in [
        json!({"agent": "x"}),
        json!({"agent": "x", "token": ""}),
        json!({"agent": "x", "token": "00"}),
        json!({"token": "00"}),
    ] {
        let r = rpc_line(params.clone());
        assert_eq!(r["error"]["data"]["kind"], "unauthorized", "{params}: {r}");
    }
}

/// `board mcp` started by the agent with only HOME and PATH, driven over two FIFOs.
fn mcp_in(board: &TestBoard, agent: &mut Agent) -> Mcp {
    let dir = board.scratch();
    let (inp, out) = (mkfifo(dir.join("mcp.in")), mkfifo(dir.join("mcp.out")));
    // Read-write opens never block and keep the FIFOs open on our side.
    let (to, from) = (fifo_rw(&inp), fifo_rw(&out));
    agent
        .sh(&format!(
            "{} < {} > {} 2> {} &",
            bare("mcp"),
            sh_quote(&inp.display().to_string()),
            sh_quote(&out.display().to_string()),
            sh_quote(&dir.join("mcp.err").display().to_string())
        ))
        .ok();
    Mcp::over(to, from)
}

#[test]
fn an_mcp_server_with_a_cleaned_environment_acts_as_its_agent() {
    let board = TestBoard::start();
    let t = board.add("through mcp");
    let mut a = board.agent("mcp-agent");
    let mut mcp = mcp_in(&board, &mut a);
    let init = mcp.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "board", "{init}");

    let claimed = mcp.tool("board_claim", json!({ "task": t }));
    assert_eq!(claimed["task"]["holder"], a.id.as_str(), "{claimed}");
    let generation = claimed["generation"].clone();
    let done = mcp.tool(
        "board_done",
        json!({"task": t, "generation": generation, "note": "finished over MCP"}),
    );
    assert_eq!(done["task"]["state"], "done", "{done}");
    let events = board.log_of("done", t);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["agent"], a.id.as_str(), "{events:?}");
}

#[test]
fn the_tree_of_an_ended_session_is_not_the_operator() {
    let board = TestBoard::start();
    let mut a = board.agent("hangs-on");
    // The agent shell ignores SIGHUP, as some CLIs do at their prompt: its session ends at the
    // hangup while the process lives on.
    a.sh("trap '' HUP").ok();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(a.launcher_pid()),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    let ended = crate::harness::poll_until(STEP, || {
        let all = board.json(&["agents", "--all"]);
        all["agents"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| s["id"] == a.id.as_str() && s["state"] == "gone")
    });
    assert!(ended, "{}", board.json(&["agents", "--all"]));
    let t = board.add("not for the ended agent").to_string();
    for line in [bare(&format!("claim {t}")), bare("add sneaky")] {
        let out = a.sh(&line);
        assert_eq!(out.code, 5, "{line}: {out:?}");
        assert!(out.stderr.contains("ended"), "{out:?}");
    }
    assert_eq!(board.ready_ids(), vec![t.parse::<i64>().unwrap()]);
}
