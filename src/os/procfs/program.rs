//! What program a process runs, from `/proc/PID/cmdline` and `/proc/PID/exe`.

use std::os::unix::ffi::OsStrExt;

/// Whether `pid` is a board process (`board serve`) of this binary: the leftover cleanup of
/// `board run` must never end a board that a command inside the agent autostarted and that the
/// launcher, a child subreaper, adopted when that command exited.
pub fn is_board_daemon(pid: i32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let mut args = cmdline.split(|b| *b == 0);
    let argv0 = args.next().unwrap_or_default();
    if args.next() != Some(b"serve".as_slice()) {
        return false;
    }
    let me = std::env::current_exe().ok();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let same_exe = match (&me, &exe) {
        // A rebuilt binary shows as "PATH (deleted)".
        (Some(me), Some(exe)) => {
            let exe = exe.to_string_lossy();
            exe.trim_end_matches(" (deleted)") == me.to_string_lossy()
        }
        _ => false,
    };
    let name_of = |p: &[u8]| {
        std::path::Path::new(std::ffi::OsStr::from_bytes(p))
            .file_name()
            .map(|f| f.to_os_string())
    };
    let same_name = me
        .as_ref()
        .and_then(|m| m.file_name().map(|f| f.to_os_string()))
        .is_some_and(|n| name_of(argv0) == Some(n));
    same_exe || same_name
}
