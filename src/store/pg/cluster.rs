//! A private PostgreSQL cluster for tests: its own data directory and Unix socket in a temporary
//! directory (never the system's own cluster; no TCP port unless asked), started with `pg_ctl`,
//! stopped in immediate mode and removed on drop.
//!
//! `initdb` runs once per test process into a template directory shared by the test processes
//! of one user and PostgreSQL version (kept in the system's temp dir, made atomically: built
//! aside, then renamed); each cluster copies it (`cp -a`, ~80 ms for 39 MB) instead of paying
//! initdb (0.4–3 s) again. PostgreSQL refuses to run as root, so a root caller runs the server
//! programs as `nobody` through `setpriv`.
//!
//! Built from std, `nix` and `tempfile` only: the library's tests use it as `mod cluster`, and
//! the integration tests include the same file by path.
#![allow(dead_code, reason = "each test binary uses a different part of it")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The unprivileged account a root caller runs the server as.
const RUN_AS: (&str, &str) = ("nobody", "nogroup");

/// The superuser the clusters are made with (trust authentication on the private socket).
pub const USER: &str = "board";

/// How a cluster's server runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// `fsync=off`: much faster, but a crash of the machine (not of the server) may lose
    /// commits. Only for tests that do not test durability; a server crash or `stop -m
    /// immediate` loses nothing either way.
    pub fsync: bool,
    /// Also listen on 127.0.0.1 on a free port (the default is the Unix socket only).
    pub tcp: bool,
    /// With `tcp`: TLS on, with a self-signed certificate for 127.0.0.1 made at start
    /// ([`Cluster::ca_file`] is the certificate a client must trust).
    pub tls: bool,
}

/// A running (or stopped) private cluster; stopped in immediate mode and deleted on drop.
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    opts: Options,
    port: u16,
}

/// The server programs the clusters need, all from one directory.
const PROGRAMS: &[&str] = &["initdb", "pg_ctl", "pg_basebackup"];

fn has_programs(dir: &Path) -> bool {
    PROGRAMS.iter().all(|p| dir.join(p).is_file())
}

/// Where `initdb`, `pg_ctl` and `pg_basebackup` are: a directory on `PATH` with all three, or
/// Debian's `/usr/lib/postgresql/<version>/bin` (newest first). None when PostgreSQL is not
/// installed.
pub fn find_bin() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            if has_programs(&d) {
                return Some(d);
            }
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| has_programs(b))
        .collect();
    versions.sort();
    versions.pop()
}

/// Why the PostgreSQL tests cannot run here (PostgreSQL is not installed), or None. Under CI
/// (`CI` set) a missing PostgreSQL is a failure, not a skip: `.ci/run` installs it.
pub fn skip_reason() -> Option<String> {
    if find_bin().is_some() {
        return None;
    }
    let why = "PostgreSQL is not installed here (no initdb on PATH or in /usr/lib/postgresql)";
    assert!(
        std::env::var_os("CI").is_none(),
        "{why}; CI must install it (.ci/run does)"
    );
    Some(why.to_string())
}

/// The uid and gid the server runs as: `nobody` when we are root, else ourselves.
fn owner() -> Result<Option<(nix::unistd::Uid, nix::unistd::Gid)>, String> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    let (user, group) = RUN_AS;
    let u = nix::unistd::User::from_name(user).ok().flatten();
    let g = nix::unistd::Group::from_name(group).ok().flatten();
    match (u, g) {
        (Some(u), Some(g)) => Ok(Some((u.uid, g.gid))),
        _ => Err(format!(
            "no user {user} or group {group} to run PostgreSQL as"
        )),
    }
}

fn chown_to_owner(path: &Path) -> Result<(), String> {
    if let Some((uid, gid)) = owner()? {
        nix::unistd::chown(path, Some(uid), Some(gid))
            .map_err(|e| format!("chown {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs a PostgreSQL program (or `cp`) as the cluster owner, with a clean environment.
fn run_as_owner(exe: &Path, args: &[&str], cwd: &Path) -> Result<Output, String> {
    let mut cmd = if owner()?.is_some() {
        let (user, group) = RUN_AS;
        let mut c = Command::new("setpriv");
        c.arg(format!("--reuid={user}"))
            .arg(format!("--regid={group}"))
            .arg("--clear-groups")
            .arg(exe);
        c
    } else {
        Command::new(exe)
    };
    let out = cmd
        .args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {} failed ({}): {}{}",
            exe.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out)
}

fn path_str(p: &Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

/// The template data directory: made once (per user and PostgreSQL version) by `initdb`, then
/// only copied.
fn template(bin: &Path) -> Result<PathBuf, String> {
    static TEMPLATE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    TEMPLATE.get_or_init(|| make_template(bin)).clone()
}

fn make_template(bin: &Path) -> Result<PathBuf, String> {
    let version = run_as_owner(&bin.join("pg_ctl"), &["--version"], Path::new("/"))?;
    let version: String = String::from_utf8_lossy(&version.stdout)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    let uid = nix::unistd::geteuid();
    let root = std::env::temp_dir().join(format!("board-test-pg-{version}-{uid}"));
    let done = root.join("data").join("PG_VERSION");
    if done.is_file() {
        return Ok(root.join("data"));
    }
    // Built aside and renamed into place: a concurrent test process either finds it complete
    // or loses the rename race and uses the winner's.
    let aside = tempfile::Builder::new()
        .prefix("board-test-pg-initdb-")
        .tempdir()
        .map_err(|e| format!("temp dir: {e}"))?;
    chown_to_owner(aside.path())?;
    let data = aside.path().join("data");
    run_as_owner(
        &bin.join("initdb"),
        &[
            "-D",
            path_str(&data)?,
            "-A",
            "trust",
            "-U",
            USER,
            "-E",
            "UTF8",
            "--no-sync",
        ],
        aside.path(),
    )?;
    let aside = aside.keep();
    if std::fs::rename(&aside, &root).is_err() {
        let _ = std::fs::remove_dir_all(&aside);
    }
    if done.is_file() {
        Ok(root.join("data"))
    } else {
        Err(format!(
            "no complete template cluster at {}",
            root.display()
        ))
    }
}

/// A free TCP port on 127.0.0.1 (asked of the kernel; free when this returns).
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("local addr: {e}"))
}

impl Cluster {
    /// Creates and starts a cluster with the default [`Options`] (socket only, `fsync=off`).
    /// Errors name the step that failed and its output.
    pub fn start() -> Result<Cluster, String> {
        Cluster::start_with(Options::default())
    }

    /// Creates and starts a cluster: a copy of the template data directory.
    pub fn start_with(opts: Options) -> Result<Cluster, String> {
        let bin = find_bin().ok_or("PostgreSQL is not installed (no initdb)")?;
        let template = template(&bin)?;
        let dir = tempfile::Builder::new()
            .prefix("board-pg-")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        chown_to_owner(dir.path())?;
        let port = if opts.tcp { free_port()? } else { 5432 };
        let c = Cluster {
            dir,
            bin,
            opts,
            port,
        };
        run_as_owner(
            Path::new("/bin/cp"),
            &["-a", path_str(&template)?, path_str(&c.data())?],
            c.dir.path(),
        )?;
        if opts.tls {
            c.make_certificate()?;
        }
        c.start_again()?;
        Ok(c)
    }

    /// The CA certificate (PEM) that signed a [`Options::tls`] cluster's certificate: what a
    /// client must trust.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    /// `openssl`: a throwaway CA, and a key and certificate for 127.0.0.1 signed by it, owned
    /// by the server's user (the server refuses a key others can read).
    fn make_certificate(&self) -> Result<(), String> {
        let d = self.dir.path();
        let ext = d.join("server.ext");
        std::fs::write(
            &ext,
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .map_err(|e| format!("{}: {e}", ext.display()))?;
        let openssl = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .map_err(|e| format!("openssl: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "openssl {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=board test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
        ])?;
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ])?;
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ])?;
        let key = d.join("server.key");
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .map_err(|e| format!("chmod {}: {e}", key.display()))?;
        chown_to_owner(&key)?;
        chown_to_owner(&d.join("server.crt"))
    }

    /// One cluster for the whole test process, started on first use. Statics are never
    /// dropped, so a watchdog process stops it (immediate mode) and removes its directory once
    /// the test process has exited.
    pub fn shared() -> Result<&'static Cluster, String> {
        static SHARED: OnceLock<Result<Cluster, String>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let c = Cluster::start()?;
                c.watchdog()?;
                Ok(c)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn watchdog(&self) -> Result<(), String> {
        let pg_ctl = self.bin.join("pg_ctl");
        let stop = match owner()? {
            Some(_) => format!(
                "setpriv --reuid={} --regid={} --clear-groups",
                RUN_AS.0, RUN_AS.1
            ),
            None => String::new(),
        };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; \
             {stop} '{pg_ctl}' -D '{data}' -m immediate -w stop >/dev/null 2>&1; rm -rf '{dir}'",
            pid = std::process::id(),
            pg_ctl = pg_ctl.display(),
            data = self.data().display(),
            dir = self.dir.path().display(),
        );
        Command::new("setsid")
            .args(["sh", "-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("starting the cluster's watchdog: {e}"))?;
        Ok(())
    }

    /// A standby of this (running) cluster: `pg_basebackup -R` into a new directory, started
    /// streaming from this one. Promote it with [`Cluster::promote`].
    pub fn standby(&self) -> Result<Cluster, String> {
        let dir = tempfile::Builder::new()
            .prefix("board-pg-standby-")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        chown_to_owner(dir.path())?;
        let port = if self.opts.tcp { free_port()? } else { 5432 };
        let c = Cluster {
            dir,
            bin: self.bin.clone(),
            opts: self.opts,
            port,
        };
        let port = self.port.to_string();
        c.pg(
            "pg_basebackup",
            &[
                "-h",
                path_str(self.dir.path())?,
                "-p",
                &port,
                "-U",
                USER,
                "-D",
                path_str(&c.data())?,
                "-R",
                "-X",
                "stream",
                "--no-sync",
            ],
        )?;
        c.start_again()?;
        Ok(c)
    }

    /// A copy of this cluster's data directory as it is now, taken while the server runs
    /// (`pg_basebackup`, consistent), started as a cluster of its own: the same system
    /// identifier and timeline, as a restored snapshot has.
    pub fn snapshot(&self) -> Result<Cluster, String> {
        let c = self.standby()?;
        c.promote()?;
        Ok(c)
    }

    /// Makes a standby a primary (`pg_ctl promote -w`): a new timeline.
    pub fn promote(&self) -> Result<(), String> {
        self.pg("pg_ctl", &["-D", path_str(&self.data())?, "-w", "promote"])?;
        Ok(())
    }

    /// Creates database `name` (`createdb`; a name of letters, digits and `_`) and returns its
    /// URL.
    pub fn create_database(&self, name: &str) -> Result<String, String> {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("database name {name:?}: use letters, digits and _"));
        }
        let port = self.port.to_string();
        let host = if self.opts.tcp {
            "127.0.0.1".to_string()
        } else {
            path_str(self.dir.path())?.to_string()
        };
        self.pg("createdb", &["-h", &host, "-p", &port, "-U", USER, name])?;
        Ok(self.url_for(name))
    }

    /// Connection URL of database `postgres` (for the `postgres` crate and psql).
    pub fn url(&self) -> String {
        self.url_for("postgres")
    }

    /// Connection URL of database `db`: the private socket (or 127.0.0.1 with [`Options::tcp`]).
    pub fn url_for(&self, db: &str) -> String {
        if self.opts.tcp {
            format!("postgresql://{USER}@127.0.0.1:{}/{db}", self.port)
        } else {
            format!(
                "postgresql://{USER}@/{db}?host={}&port={}",
                self.dir.path().display(),
                self.port
            )
        }
    }

    /// The directory holding the data directory, the socket and the server log.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server log (for a failing test to show).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The postmaster's pid, while it runs (first line of `postmaster.pid`).
    pub fn pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// `pg_ctl restart -m fast -w`: every session is disconnected; commits survive.
    pub fn restart(&self) -> Result<(), String> {
        self.stop()?;
        self.start_again()
    }

    /// Stops the server (`-m fast`: sessions are disconnected, a checkpoint is written).
    pub fn stop(&self) -> Result<(), String> {
        self.pg(
            "pg_ctl",
            &["-D", path_str(&self.data())?, "-m", "fast", "-w", "stop"],
        )?;
        Ok(())
    }

    /// Stops the server like a crash (`-m immediate`: no checkpoint; recovery at next start).
    pub fn crash(&self) -> Result<(), String> {
        self.pg(
            "pg_ctl",
            &[
                "-D",
                path_str(&self.data())?,
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        )?;
        Ok(())
    }

    /// Starts the server again after [`Cluster::stop`] or [`Cluster::crash`] (`pg_ctl -w
    /// start`, waiting until it accepts connections).
    pub fn start_again(&self) -> Result<(), String> {
        let socket = path_str(self.dir.path())?;
        let mut opts = format!("-k {socket} -p {}", self.port);
        if self.opts.tcp {
            opts.push_str(" -c listen_addresses=127.0.0.1");
        } else {
            opts.push_str(" -c listen_addresses=");
        }
        if !self.opts.fsync {
            opts.push_str(" -c fsync=off");
        }
        if self.opts.tls {
            let key = self.dir.path().join("server.key");
            opts.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                path_str(&self.dir.path().join("server.crt"))?,
                path_str(&key)?
            ));
        }
        let log = self.dir.path().join("server.log");
        let started = Instant::now();
        loop {
            let r = self.pg(
                "pg_ctl",
                &[
                    "-D",
                    path_str(&self.data())?,
                    "-l",
                    path_str(&log)?,
                    "-o",
                    &opts,
                    "-w",
                    "start",
                ],
            );
            match r {
                Ok(_) => return Ok(()),
                // A TCP port taken between asking and binding, or a previous server still
                // shutting down: try again for a little while.
                Err(e) if started.elapsed() < Duration::from_secs(10) => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(format!("{e}\nserver log:\n{}", self.log())),
            }
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn pg(&self, program: &str, args: &[&str]) -> Result<Output, String> {
        run_as_owner(&self.bin.join(program), args, self.dir.path())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.pid().is_some() {
            let _ = self.crash();
        }
    }
}
