//! End to end: `board tui` in a detached tmux session against a real board process.
//!
//! Each test gets its own temporary project, its own `board serve`, and its own tmux server
//! (`tmux -L <unique name>`); guards stop all of them even when an assertion fails. Conditions
//! are polled with deadlines, never waited for with fixed sleeps. Skipped when tmux is missing.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

const BOARD: &str = env!("CARGO_BIN_EXE_board");
const WIDTH: usize = 120;
const HEIGHT: usize = 40;
/// The backlog's columns at this width (the agents and the feed sit to its right).
fn backlog_cols() -> usize {
    usize::from(board::tui::layout::backlog_width(WIDTH as u16))
}

fn tmux_missing() -> bool {
    let missing = Command::new("tmux").arg("-V").output().is_err();
    if missing {
        eprintln!("skipping: tmux is not installed");
    }
    missing
}

/// Polls `check` every 10 ms until it returns Some or `timeout` passes.
fn poll<T>(timeout: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn clean_env(cmd: &mut Command) -> &mut Command {
    for v in [
        "BOARD_SOCKET",
        "BOARD_AGENT",
        "BOARD_TOKEN",
        "BOARD_ROOT",
        "TMUX",
    ] {
        cmd.env_remove(v);
    }
    cmd
}

fn waited(mut child: Child, timeout: Duration) {
    let done = poll(timeout, || child.try_wait().ok().flatten());
    if done.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A project with a running board; stopped on drop.
struct Board {
    dir: tempfile::TempDir,
    serve: Option<Child>,
    agents: Vec<Child>,
}

impl Board {
    fn start() -> Board {
        let dir = tempfile::Builder::new()
            .prefix("board-tui-")
            .tempdir()
            .expect("temp dir");
        let out = clean_env(&mut Command::new(BOARD))
            .args(["init", "--name", "tui-test"])
            .current_dir(dir.path())
            .output()
            .expect("board init");
        assert!(out.status.success(), "board init: {out:?}");
        let mut board = Board {
            dir,
            serve: None,
            agents: Vec::new(),
        };
        board.serve();
        board
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join(".board/board.sock")
    }

    /// Starts `board serve` and waits until it accepts connections.
    fn serve(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("serve.log")).expect("serve.log");
        let child = clean_env(&mut Command::new(BOARD))
            .arg("serve")
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("board serve");
        self.serve = Some(child);
        let socket = self.socket();
        poll(Duration::from_secs(10), || {
            UnixStream::connect(&socket).ok().map(|_| ())
        })
        .expect("the board did not start listening within 10 s");
    }

    /// Stops the board and waits for its process to end.
    fn stop(&mut self) {
        let _ = self.cmd(&["stop"]);
        if let Some(child) = self.serve.take() {
            waited(child, Duration::from_secs(5));
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BOARD);
        clean_env(&mut c).args(args).current_dir(self.dir.path());
        c
    }

    fn cmd(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("board command")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args);
        assert!(out.status.success(), "board {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn tasks(&self) -> Vec<Value> {
        let out = self.ok(&["list", "--json"]);
        let v: Value = serde_json::from_str(&out).expect("list --json");
        v["tasks"].as_array().cloned().unwrap_or_default()
    }

    /// Starts `board run --name NAME -- sh -c SCRIPT` with the board binary on PATH.
    fn agent(&mut self, name: &str, script: &str) {
        let bin_dir = Path::new(BOARD).parent().expect("bin dir");
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let child = self
            .command(&["run", "--name", name, "--", "sh", "-c", script])
            .env("PATH", path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("board run");
        self.agents.push(child);
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        for child in self.agents.drain(..) {
            // `board run` forwards TERM to its agent and cleans up its process tree.
            if let Ok(pid) = i32::try_from(child.id()) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
            }
            waited(child, Duration::from_secs(5));
        }
        self.stop();
    }
}

static SERVERS: AtomicUsize = AtomicUsize::new(0);

/// A tmux server of our own running the TUI in session `tui`; killed (and its socket file
/// removed) on drop.
struct Tmux {
    socket: String,
    socket_path: Option<PathBuf>,
}

impl Tmux {
    /// Starts `board tui` (with NO_COLOR set, so any colour on screen must have leaked in).
    fn start(board: &Board) -> Tmux {
        Tmux::start_then(board, "")
    }

    /// Like `start`; `after` runs in the pane's shell once the TUI has exited.
    fn start_then(board: &Board, after: &str) -> Tmux {
        let socket = format!(
            "board-tui-test-{}-{}",
            std::process::id(),
            SERVERS.fetch_add(1, Ordering::Relaxed)
        );
        let mut tmux = Tmux {
            socket,
            socket_path: None,
        };
        // The shell reports how the TUI ended, then keeps the pane alive (tmux 3.3 wipes a
        // dead pane's screen, and its #{pane_dead_status} is not always filled in).
        let shell_cmd = format!(
            "env -u BOARD_SOCKET -u BOARD_AGENT -u BOARD_TOKEN -u BOARD_ROOT NO_COLOR=1 '{BOARD}' tui; \
             echo \"tui exited with $?\"; {after} exec sleep 600"
        );
        let dir = board.dir.path().to_string_lossy().into_owned();
        let (w, h) = (WIDTH.to_string(), HEIGHT.to_string());
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "tui",
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
            "tui",
            "allow-rename",
            "on",
            ";",
            "set-window-option",
            "-t",
            "tui",
            "automatic-rename",
            "off",
        ]);
        tmux.socket_path = Some(PathBuf::from(tmux.format("#{socket_path}")));
        tmux
    }

    fn command(&self) -> Command {
        let mut c = Command::new("tmux");
        clean_env(&mut c).args(["-u", "-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().expect("tmux");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn capture(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "tui"])
    }

    fn capture_escapes(&self) -> String {
        self.run(&["capture-pane", "-p", "-e", "-t", "tui"])
    }

    fn format(&self, fmt: &str) -> String {
        self.run(&["display-message", "-p", "-t", "tui", fmt])
            .trim_end()
            .to_string()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "tui"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "tui", "-l", text]);
    }

    /// Waits until the screen satisfies `check`; panics with the last screen if it never does.
    fn wait_screen(&self, what: &str, timeout: Duration, check: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        let found = poll(timeout, || {
            last = self.capture();
            check(&last).then(|| last.clone())
        });
        found.unwrap_or_else(|| panic!("timed out waiting for {what}; screen:\n{last}"))
    }

    fn wait_live(&self) -> String {
        self.wait_screen("the TUI to go live", Duration::from_secs(10), |s| {
            s.contains("● live") && s.contains("READY")
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
        if let Some(p) = &self.socket_path {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The backlog part of each screen line (the left panel at this width).
fn backlog_lines(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(|l| l.chars().take(backlog_cols()).collect())
        .collect()
}

/// The rows under the heading `group` (up to the next heading).
fn section(screen: &str, group: &str) -> Vec<String> {
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
    if tmux_missing() {
        return;
    }
    let mut board = Board::start();
    board.ok(&["goal", "Parse all the things"]);
    board.ok(&["add", "Write the parser"]);
    board.ok(&["add", "Write the printer", "-p", "2"]);
    let tmux = Tmux::start(&board);
    let screen = tmux.wait_live();
    assert!(
        section(&screen, "READY")
            .iter()
            .any(|l| l.contains("#1") && l.contains("Write the parser")),
        "{screen}"
    );

    let started = Instant::now();
    board.agent("a", "board claim 1; sleep 30");
    let mut last = String::new();
    let seen = poll(Duration::from_secs(1), || {
        last = tmux.capture();
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
    tmux.keys(&["a"]);
    tmux.wait_screen("the add form", Duration::from_secs(5), |s| {
        s.contains("Add a task")
    });
    tmux.type_text("Typed in the TUI: 漢字 ok");
    tmux.keys(&["Tab"]);
    tmux.type_text("7");
    tmux.keys(&["Enter"]);
    let task = poll(Duration::from_secs(5), || {
        board
            .tasks()
            .into_iter()
            .find(|t| t["title"] == "Typed in the TUI: 漢字 ok")
    })
    .expect("the task typed in the TUI is not in `board list --json`");
    assert_eq!(task["priority"], 7);
    assert_eq!(task["state"], "open");
    tmux.wait_screen("the new task in the TUI", Duration::from_secs(5), |s| {
        section(s, "READY")
            .iter()
            .any(|l| l.contains("Typed in the TUI: 漢字 ok") && l.contains("p7"))
    });

    // An agent waiting for a human is shown loudly.
    board.agent("b", "board wait 'Ship it on Friday?'; sleep 30");
    tmux.wait_screen("the waiting banner", Duration::from_secs(5), |s| {
        s.contains("WAITING FOR YOU: b asks: Ship it on Friday?") && s.contains("WAITING")
    });

    // Force-release a claim, after confirming.
    tmux.keys(&["/"]);
    tmux.type_text("#1");
    tmux.keys(&["Enter"]);
    tmux.keys(&["r"]);
    tmux.wait_screen("the release question", Duration::from_secs(5), |s| {
        s.contains("Are you sure?") && s.contains("End a's claim on #1")
    });
    tmux.keys(&["y"]);
    let state_of = |id: i64| {
        board
            .tasks()
            .into_iter()
            .find(|t| t["id"] == id)
            .map(|t| t["state"].as_str().unwrap_or("").to_string())
    };
    poll(Duration::from_secs(5), || {
        (state_of(1).as_deref() == Some("open")).then_some(())
    })
    .expect("task 1 was not released");
    tmux.wait_screen("task 1 ready again", Duration::from_secs(5), |s| {
        section(s, "READY").iter().any(|l| l.contains("#1 "))
    });
    // Cancel it, after confirming.
    tmux.keys(&["x"]);
    tmux.wait_screen("the cancel question", Duration::from_secs(5), |s| {
        s.contains("Cancel #1")
    });
    tmux.keys(&["y"]);
    poll(Duration::from_secs(5), || {
        (state_of(1).as_deref() == Some("cancelled")).then_some(())
    })
    .expect("task 1 was not cancelled");

    // A resize to 80×24 relays the screen out for the narrow layout.
    tmux.run(&["resize-window", "-t", "tui", "-x", "80", "-y", "24"]);
    tmux.wait_screen("the 80x24 layout", Duration::from_secs(5), |s| {
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
    tmux.keys(&["q"]);
    let screen = tmux.wait_screen("the TUI to exit", Duration::from_secs(5), |s| {
        s.contains("tui exited with")
    });
    assert!(screen.contains("tui exited with 0"), "{screen}");
    // Back on the main screen: nothing of the TUI is left on it.
    assert_eq!(tmux.format("#{alternate_on}"), "0");
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
    if tmux_missing() {
        return;
    }
    assert!(colour_sgr("a \x1b[1;31mred").is_some() && colour_sgr("\x1b[1m\x1b[39mb").is_none());
    let board = Board::start();
    board.ok(&["add", "A harmless task"]);
    let tmux = Tmux::start(&board);
    let before = tmux.wait_live();
    let title_before = tmux.format("#{pane_title}");
    let window_before = tmux.format("#{window_name}");
    assert_eq!(window_before, "tuiwin");
    assert!(
        colour_sgr(&tmux.capture_escapes()).is_none(),
        "NO_COLOR, yet colour on screen:\n{before}"
    );

    let hostile = "Evil \x1b[31mRED\x1b[0m \x1b]2;pwned-title\x07 \x1b]0;pwned-zero\x1b\\ \
                   \x1bkpwned-window\x1b\\ \x1b[2J\x1b[H\x1b[5;5H \u{9b}41m c1 \x07bell \x1b[?1049l end";
    board.ok(&["add", hostile, "-p", "5"]);
    let long: String = "long-".repeat(2000);
    assert_eq!(long.len(), 10_000);
    board.ok(&["add", &long, "-p", "4"]);

    // Both rows in the backlog (the feed may show the `add` events a refresh earlier).
    let screen = tmux.wait_screen("the hostile titles", Duration::from_secs(5), |s| {
        let ready = section(s, "READY");
        ready.iter().any(|l| l.contains("Evil ␛[31mRED"))
            && ready.iter().any(|l| l.contains("long-long-"))
    });
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
        tmux.format("#{alternate_on}") == "1",
        "left the alternate screen"
    );

    // No colour leaked (NO_COLOR is set, so the TUI itself draws none) …
    let raw = tmux.capture_escapes();
    assert_eq!(colour_sgr(&raw), None, "colour leaked:\n{raw:?}");
    // … no title or window name changed …
    assert_eq!(tmux.format("#{pane_title}"), title_before);
    assert_eq!(tmux.format("#{window_name}"), window_before);
    assert!(!tmux.format("#{pane_title}").contains("pwned"));

    // … and the details dialog of the hostile task is just as inert.
    tmux.keys(&["/"]);
    tmux.type_text("evil");
    tmux.keys(&["Enter", "Enter"]);
    let details = tmux.wait_screen("the details", Duration::from_secs(5), |s| {
        s.contains("Task #2") && s.contains("history")
    });
    assert!(details.contains("␛]0;pwned-zero␛\\"), "{details}");
    let raw = tmux.capture_escapes();
    assert_eq!(colour_sgr(&raw), None, "colour leaked:\n{raw:?}");
    assert_eq!(tmux.format("#{pane_title}"), title_before);
    assert_eq!(tmux.format("#{window_name}"), window_before);
    // The 10 000-character title wraps inside the details dialog. (Escape goes alone and is
    // waited for: an ESC followed at once by another key reads as Alt+key.)
    tmux.keys(&["Escape"]);
    tmux.wait_screen("the details closed", Duration::from_secs(5), |s| {
        !s.contains("Task #2")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_screen("the filter cleared", Duration::from_secs(5), |s| {
        !s.contains("filter “evil”")
    });
    tmux.keys(&["/"]);
    tmux.type_text("#3");
    tmux.keys(&["Enter", "Enter"]);
    let details = tmux.wait_screen("the long details", Duration::from_secs(5), |s| {
        s.contains("Task #3") && s.matches("long-long-long").count() > 10
    });
    for l in details.lines() {
        assert!(l.chars().count() <= WIDTH, "line wider than the pane: {l}");
    }
    let screen = tmux.capture();
    assert!(
        !screen.contains("tui exited with"),
        "the TUI ended:\n{screen}"
    );
}

#[test]
fn the_tui_survives_a_board_restart() {
    if tmux_missing() {
        return;
    }
    let mut board = Board::start();
    board.ok(&["add", "Before the restart"]);
    let tmux = Tmux::start(&board);
    tmux.wait_live();

    board.stop();
    tmux.wait_screen("the reconnecting banner", Duration::from_secs(5), |s| {
        s.contains("board restarting / reconnecting") && s.contains("Before the restart")
    });

    board.serve();
    tmux.wait_screen("the TUI live again", Duration::from_secs(10), |s| {
        s.contains("● live") && !s.contains("board restarting")
    });
    board.ok(&["add", "After the restart"]);
    tmux.wait_screen(
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
    let shell = tmux.format("#{pane_pid}");
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
    if tmux_missing() {
        return;
    }
    for (sig, code) in [
        (Signal::SIGTERM, 143),
        (Signal::SIGINT, 130),
        (Signal::SIGHUP, 129),
    ] {
        let board = Board::start();
        // After the TUI: the terminal modes, as words (`-echo` means echo is off).
        let tmux = Tmux::start_then(&board, "echo modes: $(stty -a | tr -s ' ;\\n' ' ');");
        tmux.wait_screen("the TUI", Duration::from_secs(10), |s| {
            s.contains("Backlog")
        });
        assert_eq!(tmux.format("#{alternate_on}"), "1");
        kill(tui_pid(&tmux), sig).expect("kill");
        let screen = tmux.wait_screen("the TUI to exit", Duration::from_secs(5), |s| {
            s.contains("modes:")
        });
        assert!(
            screen.contains(&format!("tui exited with {code}")),
            "{sig:?}: {screen}"
        );
        assert_eq!(tmux.format("#{alternate_on}"), "0", "{sig:?}: {screen}");
        assert_eq!(tmux.format("#{cursor_flag}"), "1", "{sig:?}: cursor hidden");
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
