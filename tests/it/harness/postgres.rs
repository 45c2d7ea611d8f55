//! A private PostgreSQL cluster for the tests of boards sharing a PostgreSQL store: the same
//! file the store's own tests use (initdb once into a template, a copy per cluster, a private
//! Unix socket, stopped on drop). [`skip_reason`] says why a test cannot run here.

#[path = "../../../src/store/pg/cluster.rs"]
mod cluster;

#[allow(unused_imports, reason = "not every test uses every item")]
pub use cluster::*;

/// `psql -Atc SQL` against `url`: its output, trimmed. Panics (the test fails) when psql does.
pub fn psql(url: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql")
        .args([url, "-Atc", sql])
        .output()
        .expect("psql");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
