//! End to end: `board tui` in a detached tmux session against a real board process.
//!
//! Each test gets its own temporary project, its own `board serve`, and its own tmux server;
//! the board's guard stops all of them even when an assertion fails. Conditions are polled
//! with deadlines, never waited for with fixed sleeps. Skipped when tmux is missing.

use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;
use crate::harness::{poll, BOARD};

const WIDTH: usize = 120;
const HEIGHT: usize = 40;
/// The backlog's columns at this width (the agents and the feed sit to its right).
fn backlog_cols() -> usize {
    usize::from(board::tui::view::layout::backlog_width(WIDTH as u16))
}

/// The pane the TUI runs in.
pub(crate) const TUI: &str = "tui";

/// A project with a running board, named `tui-test`.
fn start_board() -> TestBoard {
    TestBoard::builder().name("tui-test").start()
}

/// `board --json list`'s tasks.
fn tasks(board: &TestBoard) -> Vec<Value> {
    board.json(&["list"])["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Starts `board tui` (with NO_COLOR set, so any colour on screen must have leaked in) in
/// session `tui` of the board's tmux server; `after` runs in the pane's shell once the TUI has
/// exited.
pub(crate) fn start_tui(board: &mut TestBoard, after: &str) -> Tmux {
    let dir = board.root().to_string_lossy().into_owned();
    let tmux = board.tmux().share();
    // The shell reports how the TUI ended, then keeps the pane alive (tmux 3.3 wipes a
    // dead pane's screen, and its #{pane_dead_status} is not always filled in).
    let shell_cmd = format!(
        "NO_COLOR=1 '{BOARD}' tui; \
         echo \"tui exited with $?\"; {after} exec sleep 600"
    );
    let (w, h) = (WIDTH.to_string(), HEIGHT.to_string());
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        TUI,
        "-n",
        "tuiwin",
        "-x",
        &w,
        "-y",
        &h,
        "-c",
        &dir,
        &shell_cmd,
        ";",
        // Let the pane rename its window (`ESC k … ESC \\`) and retitle itself, so a
        // leaked sequence would show; keep the name fixed otherwise.
        "set-window-option",
        "-t",
        TUI,
        "allow-rename",
        "on",
        ";",
        "set-window-option",
        "-t",
        TUI,
        "automatic-rename",
        "off",
    ]);
    tmux
}

pub(crate) fn wait_live(tmux: &Tmux) -> String {
    tmux.wait_screen(
        TUI,
        &[],
        "the TUI to go live",
        Duration::from_secs(10),
        |s| s.contains("● live") && s.contains("READY"),
    )
}

/// The backlog part of each screen line (the left panel at this width).
fn backlog_lines(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(|l| l.chars().take(backlog_cols()).collect())
        .collect()
}

/// The rows under the heading `group` (up to the next heading).
pub(crate) fn section(screen: &str, group: &str) -> Vec<String> {
    let headings = ["READY", "BLOCKED", "CLAIMED", "DONE", "CANCELLED"];
    let lines = backlog_lines(screen);
    let Some(start) = lines.iter().position(|l| l.starts_with(group)) else {
        return Vec::new();
    };
    lines[start + 1..]
        .iter()
        .take_while(|l| !headings.iter().any(|h| l.starts_with(h)))
        .cloned()
        .collect()
}

fn is_countdown(tok: &str) -> bool {
    tok == "lapsing" || (tok.ends_with('s') && tok.starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn a_claim_shows_up_within_a_second_and_keys_add_a_task() {
    if Tmux::missing() {
        return;
    }
    let mut board = start_board();
    board.board(&["goal", "Parse all the things"]).ok();
    board.board(&["add", "Write the parser"]).ok();
    board.board(&["add", "Write the printer", "-p", "2"]).ok();
    let tmux = start_tui(&mut board, "");
    let screen = wait_live(&tmux);
    assert!(
        section(&screen, "READY")
            .iter()
            .any(|l| l.contains("#1") && l.contains("Write the parser")),
        "{screen}"
    );

    let started = Instant::now();
    let _agent = board.run_agent("a", "board claim 1; sleep 30");
    let mut last = String::new();
    let seen = poll(Duration::from_secs(1), || {
        last = tmux.capture(TUI, &[]);
        section(&last, "CLAIMED").into_iter().find(|l| {
            let toks: Vec<&str> = l.split_whitespace().collect();
            l.contains("#1")
                && l.contains("Write the parser")
                && toks.contains(&"a")
                && toks.last().is_some_and(|t| is_countdown(t))
        })
    });
    let elapsed = started.elapsed();
    assert!(
        seen.is_some(),
        "task 1 did not show as claimed by a within 1 s; screen:\n{last}"
    );
    eprintln!("claim visible in the TUI {elapsed:?} after starting the agent");
    assert!(!section(&last, "READY").iter().any(|l| l.contains("#1 ")));

    // Add a task with the keys.
    tmux.keys(TUI, &["a"]);
    tmux.wait_screen(TUI, &[], "the add form", Duration::from_secs(5), |s| {
        s.contains("Add a task")
    });
    tmux.type_text(TUI, "Typed in the TUI: 漢字 ok");
    tmux.keys(TUI, &["Tab"]);
    tmux.type_text(TUI, "7");
    tmux.keys(TUI, &["Enter"]);
    let task = poll(Duration::from_secs(5), || {
        tasks(&board)
            .into_iter()
            .find(|t| t["title"] == "Typed in the TUI: 漢字 ok")
    })
    .expect("the task typed in the TUI is not in `board list --json`");
    assert_eq!(task["priority"], 7);
    assert_eq!(task["state"], "open");
    tmux.wait_screen(
        TUI,
        &[],
        "the new task in the TUI",
        Duration::from_secs(5),
        |s| {
            section(s, "READY")
                .iter()
                .any(|l| l.contains("Typed in the TUI: 漢字 ok") && l.contains("p7"))
        },
    );

    // An agent waiting for a human is shown loudly.
    let _agent = board.run_agent("b", "board wait 'Ship it on Friday?'; sleep 30");
    tmux.wait_screen(
        TUI,
        &[],
        "the waiting banner",
        Duration::from_secs(5),
        |s| s.contains("b asks: Ship it on Friday? — A to answer") && s.contains("WAITING"),
    );

    // Force-release a claim, after confirming.
    tmux.keys(TUI, &["/"]);
    tmux.type_text(TUI, "#1");
    tmux.keys(TUI, &["Enter"]);
    tmux.keys(TUI, &["r"]);
    tmux.wait_screen(
        TUI,
        &[],
        "the release question",
        Duration::from_secs(5),
        |s| s.contains("Are you sure?") && s.contains("End a's claim on #1"),
    );
    tmux.keys(TUI, &["y"]);
    let state_of = |id: i64| {
        tasks(&board)
            .into_iter()
            .find(|t| t["id"] == id)
            .map(|t| t["state"].as_str().unwrap_or("").to_string())
    };
    poll(Duration::from_secs(5), || {
        (state_of(1).as_deref() == Some("open")).then_some(())
    })
    .expect("task 1 was not released");
    tmux.wait_screen(
        TUI,
        &[],
        "task 1 ready again",
        Duration::from_secs(5),
        |s| section(s, "READY").iter().any(|l| l.contains("#1 ")),
    );
    // Cancel it, after confirming.
    tmux.keys(TUI, &["x"]);
    tmux.wait_screen(
        TUI,
        &[],
        "the cancel question",
        Duration::from_secs(5),
        |s| s.contains("Cancel #1"),
    );
    tmux.keys(TUI, &["y"]);
    poll(Duration::from_secs(5), || {
        (state_of(1).as_deref() == Some("cancelled")).then_some(())
    })
    .expect("task 1 was not cancelled");

    // A resize to 80×24 relays the screen out for the narrow layout.
    tmux.run(&["resize-window", "-t", "tui", "-x", "80", "-y", "24"]);
    tmux.wait_screen(TUI, &[], "the 80x24 layout", Duration::from_secs(5), |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines.len() <= 24
            && lines.iter().all(|l| l.chars().count() <= 80)
            && lines.iter().any(|l| l.starts_with(" Agents ·"))
            && lines.iter().any(|l| l.starts_with(" Events "))
            && lines
                .first()
                .is_some_and(|l| l.contains("board · tui-test"))
    });

    // q quits cleanly and gives the screen back.
    tmux.keys(TUI, &["q"]);
    let screen = tmux.wait_screen(TUI, &[], "the TUI to exit", Duration::from_secs(5), |s| {
        s.contains("tui exited with")
    });
    assert!(screen.contains("tui exited with 0"), "{screen}");
    // Back on the main screen: nothing of the TUI is left on it.
    assert_eq!(tmux.format(TUI, "#{alternate_on}"), "0");
    assert!(!screen.contains("Backlog"), "{screen}");
}

/// A colour set by SGR: 30–38, 40–48, 90–97, 100–107 (39 and 49 are the defaults).
fn colour_sgr(screen: &str) -> Option<String> {
    let mut rest = screen;
    while let Some(i) = rest.find("\x1b[") {
        let seq = &rest[i + 2..];
        let end = seq
            .find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(seq.len());
        if seq[end..].starts_with('m') {
            let colour = seq[..end].split(';').any(|p| {
                matches!(
                    p.parse::<u32>(),
                    Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                )
            });
            if colour {
                return Some(format!("\\e[{}m", &seq[..end]));
            }
        }
        rest = &seq[end.min(seq.len())..];
    }
    None
}

#[test]
fn escape_sequences_in_titles_stay_inert() {
    if Tmux::missing() {
        return;
    }
    assert!(colour_sgr("a \x1b[1;31mred").is_some() && colour_sgr("\x1b[1m\x1b[39mb").is_none());
    let mut board = start_board();
    board.board(&["add", "A harmless task"]).ok();
    let tmux = start_tui(&mut board, "");
    let before = wait_live(&tmux);
    let title_before = tmux.format(TUI, "#{pane_title}");
    let window_before = tmux.format(TUI, "#{window_name}");
    assert_eq!(window_before, "tuiwin");
    assert!(
        colour_sgr(&tmux.capture(TUI, &["-e"])).is_none(),
        "NO_COLOR, yet colour on screen:\n{before}"
    );

    let hostile = "Evil \x1b[31mRED\x1b[0m \x1b]2;pwned-title\x07 \x1b]0;pwned-zero\x1b\\ \
                   \x1bkpwned-window\x1b\\ \x1b[2J\x1b[H\x1b[5;5H \u{9b}41m c1 \x07bell \x1b[?1049l end";
    board.board(&["add", hostile, "-p", "5"]).ok();
    let long: String = "long-".repeat(2000);
    assert_eq!(long.len(), 10_000);
    board.board(&["add", &long, "-p", "4"]).ok();

    // Both rows in the backlog (the feed may show the `add` events a refresh earlier).
    let screen = tmux.wait_screen(
        TUI,
        &[],
        "the hostile titles",
        Duration::from_secs(5),
        |s| {
            let ready = section(s, "READY");
            ready.iter().any(|l| l.contains("Evil ␛[31mRED"))
                && ready.iter().any(|l| l.contains("long-long-"))
        },
    );
    let ready = section(&screen, "READY");
    let evil = ready
        .iter()
        .find(|l| l.contains("Evil"))
        .expect("hostile row");
    assert!(evil.contains("␛[31mRED␛[0m ␛]2;pwned-title␇"), "{evil}");
    let long_row = ready
        .iter()
        .find(|l| l.contains("long-long"))
        .expect("long row");
    assert!(long_row.trim_end().ends_with('…'), "{long_row}");

    // The layout is intact: nothing was cleared, moved or switched back to the main screen.
    let lines: Vec<&str> = screen.lines().collect();
    assert!(lines[0].contains("board · tui-test"), "{screen}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("quit") && l.contains("help")),
        "{screen}"
    );
    assert!(lines.len() <= HEIGHT);
    for l in &lines {
        assert!(l.chars().count() <= WIDTH, "line wider than the pane: {l}");
    }
    assert!(
        tmux.format(TUI, "#{alternate_on}") == "1",
        "left the alternate screen"
    );

    // No colour leaked (NO_COLOR is set, so the TUI itself draws none) …
    let raw = tmux.capture(TUI, &["-e"]);
    assert_eq!(colour_sgr(&raw), None, "colour leaked:\n{raw:?}");
    // … no title or window name changed …
    assert_eq!(tmux.format(TUI, "#{pane_title}"), title_before);
    assert_eq!(tmux.format(TUI, "#{window_name}"), window_before);
    assert!(!tmux.format(TUI, "#{pane_title}").contains("pwned"));

    // … and the details dialog of the hostile task is just as inert.
    tmux.keys(TUI, &["/"]);
    tmux.type_text(TUI, "evil");
    tmux.keys(TUI, &["Enter", "Enter"]);
    let details = tmux.wait_screen(TUI, &[], "the details", Duration::from_secs(5), |s| {
        s.contains("Task #2") && s.contains("history")
    });
    assert!(details.contains("␛]0;pwned-zero␛\\"), "{details}");
    let raw = tmux.capture(TUI, &["-e"]);
    assert_eq!(colour_sgr(&raw), None, "colour leaked:\n{raw:?}");
    assert_eq!(tmux.format(TUI, "#{pane_title}"), title_before);
    assert_eq!(tmux.format(TUI, "#{window_name}"), window_before);
    // The 10 000-character title wraps inside the details dialog. (Escape goes alone and is
    // waited for: an ESC followed at once by another key reads as Alt+key.)
    tmux.keys(TUI, &["Escape"]);
    tmux.wait_screen(
        TUI,
        &[],
        "the details closed",
        Duration::from_secs(5),
        |s| !s.contains("Task #2"),
    );
    tmux.keys(TUI, &["Escape"]);
    tmux.wait_screen(
        TUI,
        &[],
        "the filter cleared",
        Duration::from_secs(5),
        |s| !s.contains("filter “evil”"),
    );
    tmux.keys(TUI, &["/"]);
    tmux.type_text(TUI, "#3");
    tmux.keys(TUI, &["Enter", "Enter"]);
    let details = tmux.wait_screen(TUI, &[], "the long details", Duration::from_secs(5), |s| {
        s.contains("Task #3") && s.matches("long-long-long").count() > 10
    });
    for l in details.lines() {
        assert!(l.chars().count() <= WIDTH, "line wider than the pane: {l}");
    }
    let screen = tmux.capture(TUI, &[]);
    assert!(
        !screen.contains("tui exited with"),
        "the TUI ended:\n{screen}"
    );
}

#[test]
fn the_tui_survives_a_board_restart() {
    if Tmux::missing() {
        return;
    }
    let mut board = start_board();
    board.board(&["add", "Before the restart"]).ok();
    let tmux = start_tui(&mut board, "");
    wait_live(&tmux);

    board.stop();
    tmux.wait_screen(
        TUI,
        &[],
        "the reconnecting banner",
        Duration::from_secs(5),
        |s| s.contains("board restarting / reconnecting") && s.contains("Before the restart"),
    );

    board.serve();
    tmux.wait_screen(
        TUI,
        &[],
        "the TUI live again",
        Duration::from_secs(10),
        |s| s.contains("● live") && !s.contains("board restarting"),
    );
    board.board(&["add", "After the restart"]).ok();
    tmux.wait_screen(
        TUI,
        &[],
        "a task added after the restart",
        Duration::from_secs(2),
        |s| {
            section(s, "READY")
                .iter()
                .any(|l| l.contains("After the restart"))
        },
    );
}

/// The TUI's own pid: the one child of the pane's shell.
fn tui_pid(tmux: &Tmux) -> Pid {
    let shell = tmux.format(TUI, "#{pane_pid}");
    let pid = poll(Duration::from_secs(5), || {
        let children =
            std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
        children.split_whitespace().next()?.parse::<i32>().ok()
    })
    .expect("the pane's shell has no child");
    Pid::from_raw(pid)
}

#[test]
fn a_killed_tui_gives_the_terminal_back() {
    if Tmux::missing() {
        return;
    }
    for (sig, code) in [
        (Signal::SIGTERM, 143),
        (Signal::SIGINT, 130),
        (Signal::SIGHUP, 129),
    ] {
        let mut board = start_board();
        // After the TUI: the terminal modes, as words (`-echo` means echo is off).
        let tmux = start_tui(&mut board, "echo modes: $(stty -a | tr -s ' ;\\n' ' ');");
        tmux.wait_screen(TUI, &[], "the TUI", Duration::from_secs(10), |s| {
            s.contains("Backlog")
        });
        assert_eq!(tmux.format(TUI, "#{alternate_on}"), "1");
        kill(tui_pid(&tmux), sig).expect("kill");
        let screen = tmux.wait_screen(TUI, &[], "the TUI to exit", Duration::from_secs(5), |s| {
            s.contains("modes:")
        });
        assert!(
            screen.contains(&format!("tui exited with {code}")),
            "{sig:?}: {screen}"
        );
        assert_eq!(
            tmux.format(TUI, "#{alternate_on}"),
            "0",
            "{sig:?}: {screen}"
        );
        assert_eq!(
            tmux.format(TUI, "#{cursor_flag}"),
            "1",
            "{sig:?}: cursor hidden"
        );
        let modes: Vec<&str> = screen
            .lines()
            .skip_while(|l| !l.starts_with("modes:"))
            .flat_map(str::split_whitespace)
            .collect();
        for mode in ["echo", "icanon", "isig"] {
            assert!(modes.contains(&mode), "{sig:?}: {mode} is off: {modes:?}");
        }
        assert!(!screen.contains("Backlog"), "{sig:?}: {screen}");
    }
}
