//! Notifications that leave the terminal (`[notify]`): an agent's `board wait` reaches a real
//! session D-Bus (a private `dbus-daemon`, watched by `dbus-monitor`), a `[notify] command`
//! (a shell script that keeps its stdin), and a `board tui` in a tmux pane (OSC 9 in the pane's
//! raw output). Edits of `[notify]` apply while the board runs; a failing command is logged once.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::harness::agent::Agent;
use crate::harness::test_board::{Builder, TestBoard};
use crate::harness::*;

/// A private session bus and a monitor of its notification calls; both killed on drop.
struct SessionBus {
    daemon: Child,
    monitor: Child,
    address: String,
    seen: PathBuf,
}

impl SessionBus {
    /// Starts `dbus-daemon --session` and `dbus-monitor` on it (its output in `dir/dbus.out`),
    /// and waits until the monitor is attached.
    fn start(dir: &Path) -> SessionBus {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--print-address", "--nofork"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon (Debian: dbus-daemon) must be installed");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().expect("stdout"))
            .read_line(&mut address)
            .expect("the bus address");
        let address = address.trim().to_string();
        assert!(address.starts_with("unix:"), "bus address: {address:?}");
        let seen = dir.join("dbus.out");
        let monitor = Command::new("dbus-monitor")
            .args(["--session", "interface='org.freedesktop.Notifications'"])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdout(fs::File::create(&seen).expect("monitor output"))
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-monitor (Debian: dbus-bin) must be installed");
        let bus = SessionBus {
            daemon,
            monitor,
            address,
            seen,
        };
        // The monitor's own NameAcquired/NameLost signals say it became a monitor.
        assert!(
            poll_until(STEP, || bus.output().contains("NameLost")),
            "dbus-monitor attached: {}",
            bus.output()
        );
        bus
    }

    fn output(&self) -> String {
        fs::read_to_string(&self.seen).unwrap_or_default()
    }

    /// The `Notify` calls the monitor saw, each as its text block.
    fn notify_calls(&self) -> Vec<String> {
        self.output()
            .split("method call ")
            .filter(|c| c.contains("member=Notify"))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.monitor.kill();
        let _ = self.daemon.kill();
        let _ = self.monitor.wait();
        let _ = self.daemon.wait();
    }
}

/// A board with a `[notify]` section.
fn notify(section: &str) -> Builder {
    TestBoard::builder().config(&format!("[notify]\n{section}"))
}

/// An agent `name` that asks `question` with `board wait` and then stays.
fn asks(b: &TestBoard, name: &str, question: &str) -> Agent {
    b.run_agent(
        name,
        &format!("board wait {}; exec sleep 300", sh_quote(question)),
    )
}

/// The JSON objects the notify command received so far (one a line in `file`).
fn received(b: &TestBoard, file: &str) -> Vec<Value> {
    fs::read_to_string(b.root().join(file))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Waits until the notify command received a notice whose text is `text`; returns it.
#[track_caller]
fn wait_received(b: &TestBoard, file: &str, text: &str) -> Value {
    poll(STEP, || {
        received(b, file).into_iter().find(|n| n["text"] == text)
    })
    .unwrap_or_else(|| panic!("the command got {text:?}; it got {:?}", received(b, file)))
}

fn board_log(b: &TestBoard) -> String {
    fs::read_to_string(b.root().join(".board/board.log")).unwrap_or_default()
}

/// Waits until the board applied `board.toml` `n` times after start (`board.toml reloaded`).
#[track_caller]
fn wait_reloads(b: &TestBoard, n: usize) {
    assert!(
        poll_until(STEP, || board_log(b).matches("board.toml reloaded").count()
            >= n),
        "board.toml reloaded {n} times"
    );
}

/// A `subscribe` stream that asked for notices (`notices: true`), as a `board tui` does.
struct NoticeStream {
    lines: std::io::Lines<BufReader<std::os::unix::net::UnixStream>>,
}

impl NoticeStream {
    fn open(socket: &Path) -> NoticeStream {
        use std::io::Write;
        let mut s = std::os::unix::net::UnixStream::connect(socket).expect("connect");
        s.set_read_timeout(Some(STEP)).unwrap();
        let req = r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"notices":true}}"#;
        s.write_all(format!("{req}\n").as_bytes()).unwrap();
        let mut lines = BufReader::new(s).lines();
        let ack = lines.next().expect("an answer").expect("a line");
        assert!(ack.contains("subscribed"), "{ack}");
        NoticeStream { lines }
    }

    /// Reads the stream until a notice whose text is `text` (each read has a deadline).
    #[track_caller]
    fn wait_for(&mut self, text: &str) -> Value {
        loop {
            let line = self
                .lines
                .next()
                .unwrap_or_else(|| panic!("the stream ended before {text:?}"))
                .unwrap_or_else(|e| panic!("no notice {text:?}: {e}"));
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["method"] == "notice" && v["params"]["text"] == text {
                return v["params"].clone();
            }
        }
    }
}

const KEEP_STDIN: &str = "[\"sh\", \"-c\", \"cat >> notices.jsonl\"]";

#[test]
fn a_question_reaches_the_desktop_as_one_notify_call_naming_the_agent_and_the_question() {
    let root = tempfile::tempdir().unwrap();
    let bus = SessionBus::start(root.path());
    let mut b = notify("desktop = true\nterminal = false\n").unserved();
    let env = format!("DBUS_SESSION_BUS_ADDRESS={}", bus.address);
    b.serve_via(&["env", &env]);
    let _w = asks(&b, "w", "Which store?");
    let calls = poll(STEP, || {
        let calls = bus.notify_calls();
        calls
            .iter()
            .any(|c| c.contains("Which store?"))
            .then_some(calls)
    })
    .unwrap_or_else(|| panic!("a Notify call; the monitor saw:\n{}", bus.output()));
    assert_eq!(calls.len(), 1, "one Notify call:\n{}", bus.output());
    let call = &calls[0];
    assert!(call.contains("string \"board\""), "app name: {call}");
    assert!(
        call.contains("board: w "),
        "the summary names the agent: {call}"
    );
    assert!(
        call.contains("string \"Which store?\""),
        "the body is the question: {call}"
    );
}

#[test]
fn the_notify_command_gets_the_notice_as_one_json_object_on_stdin() {
    let b = notify(&format!("command = {KEEP_STDIN}\n")).start();
    let question = "Postgres or SQLite? \u{1b}[31m\"quoted\"";
    let _w = asks(&b, "w", question);
    let n = wait_received(&b, "notices.jsonl", question);
    let keys: Vec<&String> = n.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 5, "{n}");
    for k in ["kind", "agent", "task", "text", "at"] {
        assert!(n.get(k).is_some(), "key {k} in {n}");
    }
    assert_eq!(n["agent"], "w");
    assert!(n["kind"] == "question" || n["kind"] == "permission", "{n}");
    assert!(n["task"].is_null());
    assert!(
        n["at"].as_str().unwrap().ends_with('Z'),
        "RFC 3339 UTC: {n}"
    );
}

#[test]
fn a_message_to_the_operator_is_a_message_notice_and_one_between_agents_is_not() {
    let b = notify(&format!("command = {KEEP_STDIN}\nevents = [\"message\"]\n")).start();
    let mut agents = b.agents(&["w", "x"]);
    agents[0].board(&["send", "x", "to another agent"]).ok();
    agents[0]
        .board(&["send", "operator", "#2 is done, please look"])
        .ok();
    let n = wait_received(&b, "notices.jsonl", "#2 is done, please look");
    assert_eq!(
        (n["kind"].as_str(), n["agent"].as_str()),
        (Some("message"), Some("w"))
    );
    assert_eq!(
        received(&b, "notices.jsonl").len(),
        1,
        "{:?}",
        received(&b, "notices.jsonl")
    );
}

#[test]
fn editing_notify_turns_the_command_on_and_off_while_the_board_runs() {
    let mut b = TestBoard::builder().unserved();
    b.serve();
    let on = notify(&format!("command = {KEEP_STDIN}\n")).config_text();
    let off = TestBoard::builder().config("# notify off").config_text();

    b.write_config(&on);
    wait_reloads(&b, 1);
    let _a = asks(&b, "a", "asked while on");
    wait_received(&b, "notices.jsonl", "asked while on");

    b.write_config(&off);
    wait_reloads(&b, 2);
    // The terminal channel stays on: its stream shows when x's notice was sent (not to the
    // command).
    let mut notices = NoticeStream::open(&b.socket());
    let _x = asks(&b, "x", "asked while off");
    notices.wait_for("asked while off");

    b.write_config(&on);
    wait_reloads(&b, 3);
    let _c = asks(&b, "c", "asked while on again");
    wait_received(&b, "notices.jsonl", "asked while on again");
    // Notices are handled in order: x's question, had it been sent, would be there by now.
    let texts: Vec<Value> = received(&b, "notices.jsonl")
        .into_iter()
        .map(|n| n["text"].clone())
        .collect();
    assert_eq!(
        texts,
        vec!["asked while on", "asked while on again"],
        "nothing was sent while the command was off"
    );
}

#[test]
fn a_failing_command_is_logged_once_not_once_per_notice() {
    let b = notify("command = [\"sh\", \"-c\", \"cat >> tried.jsonl; exit 3\"]\n").start();
    let mut agents = Vec::new();
    for i in 1..=3 {
        let q = format!("question {i}");
        agents.push(asks(&b, &format!("a{i}"), &q));
        // One at a time, so no two are sent as one.
        wait_received(&b, "tried.jsonl", &q);
    }
    assert!(
        poll_until(STEP, || board_log(&b).contains("notify command failed")),
        "the failure is logged:\n{}",
        board_log(&b)
    );
    let log = board_log(&b);
    assert_eq!(
        log.matches("notify command failed").count(),
        1,
        "logged once:\n{log}"
    );
    assert!(log.contains("exited unsuccessfully"), "{log}");
}

#[test]
fn a_tui_in_a_tmux_pane_writes_osc_9_for_a_question() {
    let mut b = TestBoard::builder().start();
    let root = b.root().to_path_buf();
    let raw = root.join("tui.raw");
    let path = path_env();
    let t = b.tmux();
    t.run(&[
        "new-window",
        "-d",
        "-t",
        "keepalive",
        "-n",
        "tui",
        &format!(
            "export PATH='{path}'; cd '{}'; NO_COLOR=1 board tui; exec sleep 600",
            root.display()
        ),
    ]);
    t.run(&[
        "pipe-pane",
        "-o",
        "-t",
        "keepalive:tui",
        &format!("cat >> '{}'", raw.display()),
    ]);
    t.wait_screen("keepalive:tui", &[], "the TUI", STEP, |s| {
        s.contains("test")
    });
    let _w = asks(&b, "w", "Which store?");
    let seen = poll(STEP, || {
        let bytes = fs::read(&raw).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).to_string();
        text.contains("]9;board: w ").then_some(text)
    })
    .unwrap_or_else(|| panic!("OSC 9 in the TUI's output"));
    // Inside tmux: wrapped in the passthrough, every ESC of the sequence doubled.
    assert!(
        seen.contains("\u{1b}Ptmux;\u{1b}\u{1b}]9;board: w "),
        "passthrough-wrapped OSC 9"
    );
    assert!(seen.contains("Which store?"));
    assert!(
        seen.contains("\u{1b}\u{1b}]777;notify;board: w "),
        "OSC 777 too"
    );
}

#[test]
fn a_command_that_hangs_is_killed_after_its_timeout_and_the_next_notice_still_goes_out() {
    let b = notify(
        "command = [\"sh\", \"-c\", \"cat >> got.jsonl; echo $$ >> hung.pids; exec sleep 600\"]\n\
         command_timeout = \"1s\"\n",
    )
    .start();
    let _a = asks(&b, "a", "first");
    wait_received(&b, "got.jsonl", "first");
    let pid: i32 = poll(STEP, || {
        fs::read_to_string(b.root().join("hung.pids"))
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    })
    .expect("the command's pid");
    assert!(
        poll_until(STEP, || !crate::harness::process::running(pid)),
        "the hanging command was killed"
    );
    let _c = asks(&b, "c", "second");
    wait_received(&b, "got.jsonl", "second");
    assert!(
        poll_until(STEP, || board_log(&b)
            .contains("ran longer than command_timeout")),
        "the timeout is logged:\n{}",
        board_log(&b)
    );
}

#[test]
fn finishing_the_last_task_with_every_agent_idle_is_one_finished_notice() {
    let b = notify(&format!(
        "command = {KEEP_STDIN}\nevents = [\"finished\"]\n"
    ))
    .start();
    let task = b.add("the only task");
    let mut w = b.agent("w");
    w.claim(task);
    w.board(&["done", &task.to_string()]).ok();
    let n = poll(STEP, || {
        received(&b, "notices.jsonl")
            .into_iter()
            .find(|n| n["kind"] == "finished")
    })
    .unwrap_or_else(|| panic!("a finished notice; got {:?}", received(&b, "notices.jsonl")));
    assert!(n["agent"].is_null() && n["task"].is_null(), "{n}");
    assert!(n["text"].as_str().unwrap().contains("idle"), "{n}");
}

#[test]
fn a_task_entering_review_notifies_like_a_question_and_one_the_board_lands_itself_does_not() {
    use crate::review_and_land::{agent_in, worktree};
    let root = tempfile::tempdir().unwrap();
    let bus = SessionBus::start(root.path());
    let mut b = TestBoard::builder()
        .lease("30s")
        .liveness("process")
        .config(&format!(
            "[client]\ntimeout = \"60s\"\n\n[review]\nrequired = true\n\n\
             [git]\nbase = \"main\"\nland = \"merge\"\n\n\
             [notify]\ndesktop = true\nterminal = false\ncommand = {KEEP_STDIN}\n\
             events = [\"review\"]\n"
        ))
        .unserved();
    fs::write(
        b.root().join(".gitignore"),
        ".board/\nwt-*/\n*.out\nnotices.jsonl\n",
    )
    .unwrap();
    b.git(&["init", "-q", "-b", "main"]);
    b.git(&["add", ".gitignore", "board.toml"]);
    b.git(&["commit", "-q", "-m", "start"]);
    let env = format!("DBUS_SESSION_BUS_ADDRESS={}", bus.address);
    b.serve_via(&["env", &env]);
    let skip = b.json(&["add", "a typo fix", "--no-review"])["task"]["id"]
        .as_i64()
        .unwrap();
    let wait = b.add("a parser change");
    let wt = worktree(&b, "w", "main");
    let finish = |id: i64, file: &str| {
        agent_in(
            &b,
            &wt,
            "w",
            &format!(
                "board claim {id} > /dev/null\necho {file} > {file} && git add {file}\n\
                 git commit -q -m 'w adds {file}'\nboard done {id} > /dev/null\n"
            ),
        );
    };
    // Landed by the board at once: it never waits for a person, so no one is told.
    finish(skip, "typo.md");
    assert_eq!(b.task(skip)["state"], "done");
    finish(wait, "parser.md");
    assert_eq!(b.task(wait)["state"], "review");

    let commit = b.task(wait)["commit"].as_str().unwrap().to_string();
    let text = format!("a parser change (commit {})", &commit[..12]);
    let n = wait_received(&b, "notices.jsonl", &text);
    assert_eq!(n["kind"], "review", "{n}");
    assert_eq!(n["task"], wait, "{n}");
    assert_eq!(n["agent"], "w", "{n}");
    let reviews: Vec<Value> = received(&b, "notices.jsonl");
    assert_eq!(reviews.len(), 1, "only the task that waits: {reviews:?}");

    let calls = poll(STEP, || {
        let calls = bus.notify_calls();
        calls
            .iter()
            .any(|c| c.contains("waits for review"))
            .then_some(calls)
    })
    .unwrap_or_else(|| panic!("a Notify call; the monitor saw:\n{}", bus.output()));
    assert_eq!(calls.len(), 1, "one Notify call:\n{}", bus.output());
    assert!(
        calls[0].contains(&format!("board: #{wait} from w waits for review")),
        "the summary names the task and its holder: {}",
        calls[0]
    );
    assert!(calls[0].contains("a parser change"), "{}", calls[0]);
}
