//! Shared pieces of the benchmark programs: the release binary, a real board in a temporary
//! directory, filling it through the socket, timing whole processes and summarising samples.
//!
//! Benchmarks are plain `harness = false` programs; none of them is a test and none asserts a
//! time. Each prints one line per figure, with its baseline measured in the same run.

// Each benchmark uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use board::proto::client::{Client, Target};
use serde_json::{json, Value};

/// The release `board` binary next to the benchmark (benches run from `target/release/deps`).
pub fn board_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    dir.join("board")
}

/// Exits with a note when the release binary is missing (cargo bench builds it first).
pub fn require_bin() -> PathBuf {
    let bin = board_bin();
    if !bin.exists() {
        eprintln!(
            "skipped: {} not built (run `cargo build --release` first)",
            bin.display()
        );
        std::process::exit(0);
    }
    bin
}

/// Samples summarised in milliseconds.
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// Sorts `v` and picks the quantiles (nearest rank).
pub fn summary(mut v: Vec<Duration>) -> Summary {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let pick = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
    Summary {
        n: v.len(),
        min: ms(v[0]),
        median: pick(0.5),
        p95: pick(0.95),
        p99: pick(0.99),
        max: ms(v[v.len() - 1]),
    }
}

/// Prints one figure line: `name n=… min … median … p95 … p99 … max …` (ms).
pub fn report(name: &str, v: Vec<Duration>) -> Summary {
    let s = summary(v);
    println!(
        "{name:<44} n={:<5} min {:>8.3}  median {:>8.3}  p95 {:>8.3}  p99 {:>8.3}  max {:>8.3} ms",
        s.n, s.min, s.median, s.p95, s.p99, s.max
    );
    s
}

/// CPU time (user + system) this thread has used so far: on a loaded machine it moves far less
/// than wall time, which also counts the time spent waiting for a core.
pub fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// The machine's load average over the last minute, for the record.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}

/// Wall time of one process run to completion (stdout and stderr discarded).
pub fn time_process(cmd: &mut Command) -> (Duration, bool) {
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let t = Instant::now();
    let ok = cmd.status().map(|s| s.success()).unwrap_or(false);
    (t.elapsed(), ok)
}

/// `runs` timings of the same command; panics naming the command if one fails.
pub fn time_runs(runs: usize, mut make: impl FnMut(usize) -> Command) -> Vec<Duration> {
    (0..runs)
        .map(|i| {
            let mut cmd = make(i);
            let shown = format!("{cmd:?}");
            let (d, ok) = time_process(&mut cmd);
            assert!(ok, "benchmark command failed: {shown}");
            d
        })
        .collect()
}

/// Minor page faults and peak RSS (KiB) of one run, from `/usr/bin/time`; None without it.
pub fn faults(program: &Path, args: &[&str], dir: &Path) -> Option<(u64, u64)> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%R %M", "-o", "/dev/stdout", "--"])
        .arg(program)
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last()?;
    let mut it = last.split_whitespace().map(|w| w.parse::<u64>().ok());
    Some((it.next()??, it.next()??))
}

/// Resident set size of `pid` in MiB (VmRSS).
pub fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map(|kib| kib / 1024.0)
        .unwrap_or(f64::NAN)
}

/// A board process in a temporary directory, stopped on drop.
pub struct Bench {
    pub dir: tempfile::TempDir,
    pub bin: PathBuf,
    pub serve: Child,
}

impl Bench {
    /// `board init` with `toml_extra` appended to board.toml, then `board serve`, waiting until
    /// it answers.
    pub fn start(toml_extra: &str) -> Bench {
        let bin = require_bin();
        let dir = tempfile::tempdir().expect("tempdir");
        let ok = Command::new(&bin)
            .arg("init")
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "board init failed");
        if !toml_extra.is_empty() {
            let file = dir.path().join("board.toml");
            let text = std::fs::read_to_string(&file).expect("board.toml");
            std::fs::write(&file, format!("{text}\n{toml_extra}\n")).expect("board.toml");
        }
        let serve = board::proto::client::without_identity(
            Command::new(&bin).arg("serve").current_dir(dir.path()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("board serve");
        let b = Bench { dir, bin, serve };
        let deadline = Instant::now() + Duration::from_secs(20);
        while b.try_client().is_none() {
            assert!(Instant::now() < deadline, "the board did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
        b
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn socket(&self) -> PathBuf {
        let cfg =
            board::proto::config::Config::load(&self.root().join("board.toml")).expect("config");
        board::proto::config::Paths::new(self.root(), &cfg).socket
    }

    fn try_client(&self) -> Option<Client> {
        let target = Target::new(self.socket());
        let mut c = Client::connect(&target, false).ok()?;
        c.identity = None;
        c.call("hello", json!({})).ok()?;
        Some(c)
    }

    /// An operator connection (hello already done).
    pub fn client(&self) -> Client {
        self.try_client().expect("connect to the board")
    }

    /// Adds `n` tasks through one connection: titles of ~40 bytes, a body on every tenth, a
    /// priority spread, and one dependency on every twentieth (on the task before it).
    pub fn fill(&self, n: usize) {
        let mut c = self.client();
        for i in 1..=n {
            let mut p = json!({
                "title": format!("task {i}: refactor the module number {}", i % 97),
                "priority": (i % 5) as i64,
            });
            if i % 10 == 0 {
                p["body"] = json!("A longer description of what is wanted. ".repeat(4));
            }
            if i % 20 == 0 {
                p["after"] = json!([i as i64 - 1]);
            }
            c.call_raw("add", p).expect("add");
        }
    }

    /// A `board` command in the board's directory, with no inherited identity.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        board::proto::client::without_identity(&mut c);
        c.args(args).current_dir(self.root());
        c
    }

    pub fn pid(&self) -> u32 {
        self.serve.id()
    }

    /// One call on a fresh operator connection.
    pub fn call(&self, method: &str, params: Value) -> Value {
        self.client().call_raw(method, params).expect(method)
    }
}

impl Drop for Bench {
    fn drop(&mut self) {
        let _ = self.cmd(&["stop"]).output();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.serve.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.serve.kill();
        let _ = self.serve.wait();
    }
}

/// Child processes a benchmark started (agent sessions), killed and reaped when dropped, so a
/// benchmark that fails half way leaves nothing running.
pub struct Kids(pub Vec<Child>);

impl Drop for Kids {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
