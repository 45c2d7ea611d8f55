//! A private PostgreSQL cluster for the tests of boards sharing a PostgreSQL store: the same
//! file the store's own tests use (initdb once into a template, a copy per cluster, a private
//! Unix socket, stopped on drop). [`skip_reason`] says why a test cannot run here.

#[path = "../../../src/store/pg/cluster.rs"]
mod cluster;

#[allow(unused_imports, reason = "not every test uses every item")]
pub use cluster::*;
