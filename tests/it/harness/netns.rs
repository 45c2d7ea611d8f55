//! Hosts in network namespaces: each host's board reaches the shared PostgreSQL store over a
//! veth pair of its own, so a test can cut one host's link the way a vanished host looks to
//! the server (packets dropped, never a reset) and restore it.
//!
//! - [`skip_reason`]: why this machine cannot make namespaces (they need root).
//! - [`Store`]: a private cluster listening on every address (so on each link's root side),
//!   trusting the links' subnets; restarted with the same settings.
//! - [`Link`]: a namespace with a veth pair to the root namespace and its own /30; removed on
//!   drop (also when the test panics); [`Link::cut`] / [`Link::restore`] take the root side
//!   down and up.
//!
//! A board served in a namespace ([`Link::serve`]) still answers on its Unix socket from any
//! namespace; only its TCP to the store goes through the link.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::harness::postgres::{find_bin, Cluster, Options, USER};
use crate::harness::test_board::TestBoard;

/// The subnet every link's /30 is carved from (the store's `pg_hba` trusts it).
const SUBNET: &str = "10.0.0.0/8";

/// Runs `ip ARGS`: Ok, or Err with what it printed.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Why network namespaces cannot be made here (not root, no `ip`), or None: tries to add and
/// remove a throwaway namespace.
pub fn skip_reason() -> Option<String> {
    let probe = format!("bprobe{}", std::process::id());
    match ip(&["netns", "add", &probe]) {
        Ok(()) => {
            let _ = ip(&["netns", "del", &probe]);
            None
        }
        Err(e) => Some(format!("network namespaces need root ({e})")),
    }
}

/// A private PostgreSQL cluster reachable over TCP from the links' namespaces.
pub struct Store {
    /// The cluster (its Unix socket URL is [`Cluster::url`], for psql from the test).
    pub pg: Cluster,
    port: u16,
}

impl Store {
    /// Starts a cluster listening on all addresses, with `trust` for [`SUBNET`].
    pub fn start() -> Result<Store, String> {
        let pg = Cluster::start_with(Options {
            tcp: true,
            ..Options::default()
        })?;
        let url = pg.url();
        let port = url
            .rsplit(':')
            .next()
            .and_then(|s| s.split('/').next())
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("no port in {url}"))?;
        pg.stop()?;
        let hba = pg.dir().join("data").join("pg_hba.conf");
        let mut text = std::fs::read_to_string(&hba).map_err(|e| format!("pg_hba: {e}"))?;
        text.push_str(&format!("host all all {SUBNET} trust\n"));
        std::fs::write(&hba, text).map_err(|e| format!("pg_hba: {e}"))?;
        let s = Store { pg, port };
        s.start_again()?;
        Ok(s)
    }

    /// The URL of database `db` as seen from `link`'s namespace (its root-side address).
    pub fn url_from(&self, link: &Link, db: &str) -> String {
        format!("postgresql://{USER}@{}:{}/{db}", link.root_addr, self.port)
    }

    /// `pg_ctl start -w` with the listening settings (the server must be stopped).
    pub fn start_again(&self) -> Result<(), String> {
        let bin = find_bin().ok_or("PostgreSQL is not installed")?;
        let dir = self.pg.dir();
        let opts = format!(
            "-k {} -p {} -c listen_addresses=* -c fsync=off",
            dir.display(),
            self.port
        );
        let data = dir.join("data");
        let log = dir.join("server.log");
        let mut cmd = if nix::unistd::geteuid().is_root() {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
                .arg(bin.join("pg_ctl"));
            c
        } else {
            Command::new(bin.join("pg_ctl"))
        };
        let out = cmd
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(&log)
            .args(["-o", &opts, "-w", "start"])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("pg_ctl: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "pg_ctl start: {}{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                self.pg.log()
            ))
        }
    }

    /// `pg_ctl restart -m fast`: every session is disconnected; commits survive.
    pub fn restart(&self) -> Result<(), String> {
        self.pg.stop()?;
        self.start_again()
    }
}

/// A network namespace joined to the root namespace by a veth pair with its own /30.
pub struct Link {
    /// The namespace's name (for `ip netns exec`).
    pub ns: String,
    root_if: String,
    /// The root side's address: where the store listens for this namespace.
    pub root_addr: String,
}

impl Link {
    /// Makes a namespace and its link, up. Names and the /30 are unique per process and link,
    /// so tests make links in parallel.
    pub fn new() -> Result<Link, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let tag = format!("{}x{n}", pid % 100_000);
        let ns = format!("bns{tag}");
        let root_if = format!("bvr{tag}");
        let ns_if = format!("bvn{tag}");
        // 10.P.Q.R/30: P.Q from the pid, R from the link number (64 links per process).
        let (p, q, r) = ((pid >> 8) % 256, pid % 256, (n % 64) * 4);
        let root_addr = format!("10.{p}.{q}.{}", r + 1);
        let ns_addr = format!("10.{p}.{q}.{}", r + 2);
        ip(&["netns", "add", &ns])?;
        let link = Link {
            ns: ns.clone(),
            root_if: root_if.clone(),
            root_addr: root_addr.clone(),
        };
        ip(&[
            "link", "add", &root_if, "type", "veth", "peer", "name", &ns_if, "netns", &ns,
        ])?;
        ip(&["addr", "add", &format!("{root_addr}/30"), "dev", &root_if])?;
        ip(&["link", "set", &root_if, "up"])?;
        ip(&[
            "-n",
            &ns,
            "addr",
            "add",
            &format!("{ns_addr}/30"),
            "dev",
            &ns_if,
        ])?;
        ip(&["-n", &ns, "link", "set", &ns_if, "up"])?;
        ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        Ok(link)
    }

    /// Cuts the link: the root side goes down, so packets either way are dropped without a
    /// reset (the server's and the board's TCP see a host that vanished).
    pub fn cut(&self) {
        ip(&["link", "set", &self.root_if, "down"]).expect("cut the link");
    }

    /// Restores a cut link.
    pub fn restore(&self) {
        ip(&["link", "set", &self.root_if, "up"]).expect("restore the link");
    }

    /// The wrapper that runs a program in this namespace (`ip netns exec NS`).
    pub fn wrapper(&self) -> [&str; 3] {
        ["netns", "exec", &self.ns]
    }

    /// Serves `board` in this namespace; the board's pid.
    pub fn serve(&self, board: &mut TestBoard) -> i32 {
        board.serve_via(&["ip", "netns", "exec", &self.ns])
    }

    /// A `board ARGS` command of `board`'s project, run in this namespace.
    pub fn board_cmd(&self, board: &TestBoard, args: &[&str]) -> Command {
        let mut c = board.command("ip");
        c.args(self.wrapper())
            .arg(Path::new(crate::harness::BOARD))
            .args(args);
        c
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // Removing the namespace removes its end of the pair, and with it the root end.
        let _ = ip(&["netns", "del", &self.ns]);
        let _ = ip(&["link", "del", &self.root_if]);
    }
}
