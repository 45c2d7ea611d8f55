//! `[notify] command`: runs the configured program once per notice (or burst) with the notice as
//! one JSON object on stdin, keys `kind`, `agent`, `task`, `text`, `at`. It runs in a process
//! group of its own; one still running after `command_timeout` is killed with its group.

use std::process::Stdio;
use std::sync::Arc;

use tokio::io::AsyncWriteExt;

use super::super::state::Board;
use crate::proto::NoticeView;

/// Runs the command in force for `notice`. Errors: what went wrong, in words (it could not
/// start, it exited unsuccessfully, it ran past its timeout).
pub async fn send(board: Arc<Board>, notice: NoticeView) -> Result<(), String> {
    let (argv, timeout) = {
        let cfg = board.config();
        (cfg.notify.command.clone(), cfg.notify.command_timeout.0)
    };
    let Some((program, args)) = argv.as_deref().and_then(|a| a.split_first()) else {
        // Turned off since the burst was queued.
        return Ok(());
    };
    let mut json = serde_json::to_string(&notice).map_err(|e| e.to_string())?;
    json.push('\n');
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(&board.paths().root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {program:?}: {e}"))?;
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let run = async {
        if let Some(s) = stdin.as_mut() {
            // A command that does not read its stdin is fine.
            let _ = s.write_all(json.as_bytes()).await;
        }
        drop(stdin);
        child.wait().await
    };
    match tokio::time::timeout(timeout, run).await {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(format!("{program:?} exited unsuccessfully ({status})")),
        Ok(Err(e)) => Err(format!("waiting for {program:?}: {e}")),
        Err(_) => {
            kill_group(pid);
            Err(format!(
                "{program:?} ran longer than command_timeout ({}) and was killed",
                humantime::format_duration(timeout)
            ))
        }
    }
}

/// Kills the command's process group (what it started too); `kill_on_drop` reaps the leader.
fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}
