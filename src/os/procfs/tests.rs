//! Tests of `/proc` reading: parsing on fixed text, the rest on real child processes (`sleep`,
//! `sh`), stopped, killed and reaped by the test.

use super::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A realistic stat line (Linux 6.x, 52 fields) for a process named `comm`.
fn line(comm: &str) -> String {
    format!(
        "4242 ({comm}) S 17 4242 17 34816 4242 4194304 120 0 0 0 \
         7 3 11 5 20 0 1 0 987654 9375744 812 18446744073709551615 1 1 0 0 0 0 0 \
         4096 65536 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 256\n"
    )
}

fn spawn_sleep() -> Child {
    Command::new("sleep")
        .arg("30")
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sleep")
}

/// Polls `f` until it returns true or 5 s pass.
fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f()
}

fn pid_of(child: &Child) -> i32 {
    i32::try_from(child.id()).expect("pid fits i32")
}

#[test]
fn parses_a_name_with_spaces_and_parens() {
    for comm in ["(a) b (c))", "a) b (c)", ") ) S 1 2 3", "plain"] {
        let stat = parse_stat(&line(comm)).expect(comm);
        assert_eq!(
            stat,
            ProcStat {
                pid: 4242,
                ppid: 17,
                state: 'S',
                utime_ticks: 7,
                stime_ticks: 3,
                cutime_ticks: 11,
                cstime_ticks: 5,
                start_time_ticks: 987654,
                exit_code: Some(256),
            },
            "comm {comm:?}"
        );
    }
}

#[test]
fn exit_code_is_optional_and_garbage_is_rejected() {
    let full = line("x");
    // Drop the last field: a kernel before 3.5 prints 44 fields; the parser only needs 22.
    let short: String = full.split(' ').take(30).collect::<Vec<_>>().join(" ");
    let stat = parse_stat(&short).expect("short line");
    assert_eq!(stat.exit_code, None);
    assert_eq!(stat.start_time_ticks, 987654);

    for bad in [
        "",
        "4242 no parens S 1",
        "4242 (x) S 17 1 2",
        "abc (x) S 17 4242 17 34816 4242 4194304 120 0 0 0 7 3 11 5 20 0 1 0 9",
        &full.replace(" S ", " SS "),
        &full.replace(" 987654 ", " -1 "),
    ] {
        assert!(
            matches!(parse_stat(bad), Err(ProcError::Malformed(_))),
            "{bad:?}"
        );
    }
}

#[test]
fn reads_own_process() {
    let me = std::process::id() as i32;
    let stat = read_stat(me).expect("own stat");
    assert_eq!(stat.pid, me);
    let start = start_time(me).expect("own start time");
    assert_eq!(liveness(me, start), Liveness::Alive);
    assert_eq!(liveness(me, start + 1), Liveness::Gone);
    assert!(matches!(read_stat(0), Err(ProcError::Gone)));
    assert!(matches!(read_stat(-1), Err(ProcError::Gone)));
    let id = boot_id().expect("boot id");
    assert_eq!(id.len(), 36, "{id:?}");
}

#[test]
fn reaped_child_is_gone() {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = pid_of(&child);
    let start = start_time(pid).unwrap_or(0);
    child.wait().expect("wait");
    assert_eq!(liveness(pid, start), Liveness::Gone);
    assert!(matches!(read_stat(pid), Err(ProcError::Gone)));
}

#[test]
fn stopped_child_is_stopped() {
    let mut child = spawn_sleep();
    let pid = pid_of(&child);
    let start = start_time(pid).expect("start time");
    assert_eq!(liveness(pid, start), Liveness::Alive);
    kill(Pid::from_raw(pid), Signal::SIGSTOP).expect("SIGSTOP");
    let stopped = eventually(|| liveness(pid, start) == Liveness::Stopped);
    kill(Pid::from_raw(pid), Signal::SIGCONT).expect("SIGCONT");
    let resumed = eventually(|| liveness(pid, start) == Liveness::Alive);
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(stopped, "never saw state T");
    assert!(resumed, "never saw it running again");
}

#[test]
fn killed_unreaped_child_is_zombie_then_gone() {
    let mut child = spawn_sleep();
    let pid = pid_of(&child);
    let start = start_time(pid).expect("start time");
    child.kill().expect("kill");
    let zombie = eventually(|| liveness(pid, start) == Liveness::Zombie);
    let exit_code = read_stat(pid).ok().and_then(|stat| stat.exit_code);
    child.wait().expect("wait");
    assert!(zombie, "never saw state Z");
    // Raw wait status of a SIGKILLed process: the signal number.
    assert_eq!(exit_code, Some(9));
    assert_eq!(liveness(pid, start), Liveness::Gone);
}

#[test]
fn child_is_a_descendant() {
    let me = std::process::id() as i32;
    let mut child = spawn_sleep();
    let pid = pid_of(&child);
    let results = (
        is_descendant(pid, me),
        is_descendant(pid, pid),
        is_descendant(me, pid),
        is_descendant(pid, 1),
        descendants(me).contains(&pid),
    );
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert_eq!(results, (true, true, false, true, true));
    assert!(!is_descendant(pid, 0));
    assert!(!is_descendant(0, me));
}

#[test]
fn ancestry_lists_the_chain_nearest_first() {
    let me = std::process::id() as i32;
    let mut child = spawn_sleep();
    let pid = pid_of(&child);
    let chain = ancestry(pid);
    child.kill().expect("kill");
    child.wait().expect("wait");
    let pids: Vec<i32> = chain.iter().map(|&(p, _)| p).collect();
    assert_eq!(pids.first(), Some(&pid), "{pids:?}");
    assert_eq!(pids.get(1), Some(&me), "{pids:?}");
    assert_eq!(chain[1].1, start_time(me).expect("own start"));
    assert!(!pids.contains(&0), "{pids:?}");
    assert!(ancestry(0).is_empty());
    assert!(ancestry(pid).is_empty(), "a reaped child has no chain");
}

#[test]
fn grandchildren_are_descendants() {
    let mut child = Command::new("sh")
        .args(["-c", "sleep 30 & wait"])
        .spawn()
        .expect("spawn sh");
    let sh = pid_of(&child);
    let mut found = Vec::new();
    let ok = eventually(|| {
        found = descendants(sh);
        !found.is_empty()
    });
    child.kill().expect("kill");
    child.wait().expect("wait");
    for &pid in &found {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    assert!(ok, "the sleep never showed up under sh");
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn tree_cpu_counts_reaped_helpers() {
    // The busy subshell is a child of sh; once sh has waited for it, its CPU time shows
    // only in sh's cutime/cstime.
    let mut child = Command::new("sh")
        .args([
            "-c",
            "(i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done) & wait; exec sleep 30",
        ])
        .spawn()
        .expect("spawn sh");
    let pid = pid_of(&child);
    let counted = eventually(|| {
        read_stat(pid).is_ok_and(|stat| stat.cutime_ticks + stat.cstime_ticks > 0)
            && tree_cpu_ticks(pid) > 0
    });
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(counted, "the helper's CPU time was never counted");
    assert_eq!(tree_cpu_ticks(pid), 0, "a gone root has no tree");
}

/// A sleeping process `pid` under `ppid` that used 1 tick of CPU time.
fn stat(pid: i32, ppid: i32) -> ProcStat {
    ProcStat {
        pid,
        ppid,
        state: 'S',
        utime_ticks: 1,
        stime_ticks: 0,
        cutime_ticks: 0,
        cstime_ticks: 0,
        start_time_ticks: 0,
        exit_code: None,
    }
}

#[test]
fn a_scan_visits_each_pid_once_even_in_a_cycle() {
    let table = ProcTable::from_stats(vec![
        stat(10, 1),
        stat(11, 10),
        stat(12, 11),
        stat(10, 12),
        stat(13, 10),
    ]);
    assert_eq!(table.descendants_pruned(10, &|_| false), vec![11, 13, 12]);
    assert_eq!(table.descendants_pruned(99, &|_| false), Vec::<i32>::new());
    // A pruned process takes its subtree with it.
    assert_eq!(table.descendants_pruned(10, &|p| p == 11), vec![13]);
}

#[test]
fn a_scan_answers_liveness_and_prunes_subtrees() {
    let table = ProcTable::from_stats(vec![
        stat(10, 1),
        stat(11, 10),
        stat(12, 11),
        stat(13, 10),
        stat(14, 13),
    ]);
    assert_eq!(
        table.descendants_pruned(10, &|_| false),
        vec![11, 13, 12, 14]
    );
    assert_eq!(table.descendants_pruned(10, &|p| p == 13), vec![11, 12]);
    assert_eq!(table.tree_cpu_ticks_pruned(10, |p| p == 13), 3);
    assert_eq!(table.tree_cpu_ticks_pruned(99, |_| false), 0);
    assert_eq!(table.liveness(13, 0), Liveness::Alive);
    assert_eq!(table.liveness(13, 1), Liveness::Gone, "another start time");
    assert_eq!(table.liveness(99, 0), Liveness::Gone);
}
