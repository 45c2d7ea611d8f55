//! Starting the board when none answers: `board serve` forked twice into a session of its own
//! (it outlives the command and is never in an agent's process tree), then connecting until it
//! answers, starting it again when it lost the lock race to a board that then went away. A
//! connect refused by a sandbox is said to be one, since starting a board would not help.

use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::locate::Target;
use crate::proto::config::Paths;
use crate::proto::error::{BoardError, BoardResult};

/// Set by Codex in the commands it runs in a sandbox without network access (which also blocks
/// Unix sockets on Linux).
const CODEX_NO_NETWORK: &str = "CODEX_SANDBOX_NETWORK_DISABLED";

/// Whether a failed connect to the socket means a sandbox (or the system) forbids it: the socket
/// may well be served, so starting a board would only wait in vain. EPERM is what seccomp
/// sandboxes answer (Codex on Linux), EACCES what file permissions or Landlock answer.
pub(super) fn sandboxed(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(code) if code == nix::libc::EPERM || code == nix::libc::EACCES
    ) || std::env::var(CODEX_NO_NETWORK).is_ok_and(|v| v == "1")
}

/// The `unavailable` error for a connect that a sandbox blocked: says so and how to allow it.
pub(super) fn sandbox_error(socket: &std::path::Path, e: &std::io::Error) -> BoardError {
    let codex = if std::env::var(CODEX_NO_NETWORK).is_ok_and(|v| v == "1") {
        format!(" ({CODEX_NO_NETWORK}=1 is set: this runs in Codex's sandbox)")
    } else {
        String::new()
    };
    BoardError::unavailable(format!(
        "the agent's sandbox blocks the board socket {} ({e}){codex}: allow the agent to \
         connect to it (for Codex: `-c sandbox_workspace_write.network_access=true`, or run \
         `board` outside the sandbox); if no sandbox is involved, the socket or its directory \
         belongs to another user or lacks permissions",
        socket.display()
    ))
    .with("sandbox", true)
}

/// How many boards one connect starts at most, when each started one exits without answering.
const MAX_STARTS: u32 = 3;

/// Starts the board for `target` (found through `paths`) and connects to it once it answers,
/// within 5 s. Errors: `unavailable` when a sandbox blocks the socket, when the started board
/// exited without answering ([`MAX_STARTS`] times), or when it did not answer in time.
pub(super) fn start_and_connect(target: &Target, paths: &Paths) -> BoardResult<UnixStream> {
    let mut started = start_board(paths)?;
    let mut starts = 1;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        // Read before connecting: a board that lost a start race to another one
        // exits only once that one answers, so a connect after its exit succeeds.
        let exited = started.try_recv().ok();
        if exited.is_some() {
            // Starting it again would not help: say what is wrong in the file.
            if let Some(e) = invalid_config(paths) {
                return Err(e);
            }
        }
        match UnixStream::connect(&target.socket) {
            Ok(s) => return Ok(s),
            Err(e) if sandboxed(&e) => return Err(sandbox_error(&target.socket, &e)),
            // The board it started gave up because another one held the board's
            // lock, and that one went away (crashed) before we connected: start
            // one again, a few times at most.
            Err(_) if exited.is_some() && starts < MAX_STARTS => {
                started = start_board(paths)?;
                starts += 1;
            }
            // The board it started gave up: waiting out the deadline would only stall
            // the caller.
            Err(e) if exited.is_some() => {
                let exited = exited.unwrap_or_default();
                let see = match exited.strip_prefix("exited: ") {
                    Some(_) => format!("see {}", paths.log.display()),
                    None => "run `board serve` in the project to see why".to_string(),
                };
                return Err(BoardError::unavailable(format!(
                    "started a board but it {exited}, without answering at {} ({e}); {see}",
                    target.socket.display()
                )));
            }
            Err(e) if Instant::now() > deadline => {
                return Err(BoardError::unavailable(format!(
                    "started a board but it did not answer at {} within 5 s ({e}); see {}",
                    target.socket.display(),
                    paths.log.display()
                )))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// The `usage` error (exit 2) for a `board.toml` the board refuses to start with, naming what
/// is wrong in it; None when the file loads.
fn invalid_config(paths: &Paths) -> Option<BoardError> {
    let e = crate::proto::config::Config::load(&paths.config).err()?;
    Some(e.into_board_error())
}

/// Removes the board identity variables from a child's environment, so a board or agent started
/// from inside an agent session does not inherit that session.
pub fn without_identity(cmd: &mut Command) -> &mut Command {
    cmd.env_remove("BOARD_SOCKET")
        .env_remove("BOARD_AGENT")
        .env_remove("BOARD_TOKEN")
}

/// Starts `board serve` for `paths` in the background, detached from this terminal and from
/// this process: it is forked twice (the middle process exits at once) into its own session
/// with no stdio, so it outlives the command that started it and is not that command's child.
/// A `board run` launcher that autostarts the board thus never has it in its process tree
/// (it becomes a child subreaper only after connecting). The receiver gets a line (`exited`)
/// if the board ends within 10 s.
pub fn start_board(paths: &Paths) -> BoardResult<mpsc::Receiver<String>> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let exe = std::env::current_exe()
        .map_err(|e| BoardError::unavailable(format!("cannot find the board binary: {e}")))?;
    let mut cmd = Command::new(exe);
    without_identity(cmd.arg("serve").current_dir(&paths.root))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // The middle process tells us the board's pid through this pipe (close-on-exec: the board
    // itself never holds it).
    let (rd, wr) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| BoardError::unavailable(format!("starting the board: {e}")))?;
    let wr_fd = wr.as_raw_fd();
    #[allow(
        unsafe_code,
        reason = "pre_exec runs between fork and exec; the closure only forks, writes, exits or calls setsid"
    )]
    // SAFETY: between fork and exec only async-signal-safe calls run: fork, write, _exit,
    // setsid.
    unsafe {
        cmd.pre_exec(
            move || match nix::unistd::fork().map_err(std::io::Error::from)? {
                nix::unistd::ForkResult::Parent { child } => {
                    let pid = child.as_raw().to_ne_bytes();
                    nix::libc::write(wr_fd, pid.as_ptr().cast(), pid.len());
                    nix::libc::_exit(0);
                }
                nix::unistd::ForkResult::Child => {
                    nix::unistd::setsid().map_err(std::io::Error::from)?;
                    Ok(())
                }
            },
        );
    }
    let mut middle = cmd
        .spawn()
        .map_err(|e| BoardError::unavailable(format!("starting the board: {e}")))?;
    drop(wr);
    let _ = middle.wait();
    let mut buf = [0u8; 4];
    let mut rd = std::fs::File::from(rd);
    let pid = match rd.read_exact(&mut buf) {
        Ok(()) => i32::from_ne_bytes(buf),
        Err(e) => return Err(BoardError::unavailable(format!("starting the board: {e}"))),
    };
    let start = crate::os::procfs::start_time(pid).ok();
    let (tx, rx) = mpsc::channel();
    let record = crate::proto::last_run::path(paths);
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let gone = match start {
                Some(st) => matches!(
                    crate::os::procfs::liveness(pid, st),
                    crate::os::procfs::Liveness::Gone | crate::os::procfs::Liveness::Zombie
                ),
                None => true,
            };
            if gone {
                // The reason the board recorded, when it could not start.
                let why = crate::proto::last_run::read(&record)
                    .filter(|r| i32::try_from(r.pid).is_ok_and(|p| p == pid))
                    .and_then(|r| r.reason);
                let _ =
                    tx.send(why.map_or_else(|| "exited".to_string(), |w| format!("exited: {w}")));
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    Ok(rx)
}
