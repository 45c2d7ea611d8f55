//! Claims on the PostgreSQL store, against a private cluster with `fsync` and synchronous
//! commit on (durable, as a real server):
//!
//! - `bare claim statement`: the engine's own limit: `claim the best open task FOR UPDATE SKIP
//!   LOCKED, generation + 1` in autocommit, from raw clients (the figure the store is compared
//!   with), and the same statement inside `BEGIN; pg_advisory_xact_lock(…); …; COMMIT`, the
//!   write lock every store transaction takes (its cost);
//! - `PgStore claim+done`: full cycles (a claim of the best ready task, then `done`) through
//!   the store, one and four hosts (threads, each its own `PgStore` and agent session);
//! - per-claim latency of the same claim on the embedded SQLite store and on PostgreSQL (the
//!   latency the network store adds), one thread.
//!
//! Run: `cargo bench --bench pg_store` (needs PostgreSQL installed; `.ci/run` installs it).
//! `BENCH_PG_FSYNC=off` runs the server without fsync, to see the cost of the statements apart
//! from the disk's flush time.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../src/store/pg/cluster.rs"]
mod cluster;
mod support;

use std::time::{Duration, Instant};

use board::store::{Lease, PgStore, SqliteStore, Store, OPERATOR};
use support::{load, report};

const SECONDS: u64 = 3;
const LEASE: i64 = 60_000;

fn main() {
    if let Some(why) = cluster::skip_reason() {
        println!("skipped: {why}");
        return;
    }
    println!("load before: {}", load());
    let fsync = std::env::var("BENCH_PG_FSYNC").map_or(true, |v| v != "off");
    println!("fsync: {}", if fsync { "on" } else { "off" });
    let c = cluster::Cluster::start_with(cluster::Options {
        fsync,
        ..Default::default()
    })
    .unwrap();
    let mut admin = postgres::Client::connect(&c.url(), postgres::NoTls).unwrap();
    for db in ["bare", "store1", "store4", "latency"] {
        admin
            .batch_execute(&format!("CREATE DATABASE {db}"))
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();

    // The schema, from the store itself.
    drop(PgStore::connect(&c.url_for("bare"), "bench", &dir.path().join("bare.hwm")).unwrap());
    let bare = |locked: bool, threads: usize| -> f64 {
        let mut cl = postgres::Client::connect(&c.url_for("bare"), postgres::NoTls).unwrap();
        cl.batch_execute(
            "TRUNCATE tasks, task_deps, claims, notes, events RESTART IDENTITY CASCADE;
             INSERT INTO tasks (title, created_at, updated_at)
             SELECT 't' || i, '', '' FROM generate_series(1, 200000) i;
             ANALYZE tasks",
        )
        .unwrap();
        let stmt = "UPDATE tasks SET state = 'claimed', generation = generation + 1
                    WHERE id = (SELECT id FROM tasks WHERE state = 'open'
                                ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED)
                    RETURNING id, generation";
        let until = Instant::now() + Duration::from_secs(SECONDS);
        let total: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut cl =
                            postgres::Client::connect(&c.url_for("bare"), postgres::NoTls).unwrap();
                        let st = cl.prepare(stmt).unwrap();
                        let mut n = 0;
                        while Instant::now() < until {
                            if locked {
                                let mut tx = cl.transaction().unwrap();
                                tx.execute("SELECT pg_advisory_xact_lock(42)", &[]).unwrap();
                                tx.query(&st, &[]).unwrap();
                                tx.commit().unwrap();
                            } else {
                                cl.query(&st, &[]).unwrap();
                            }
                            n += 1;
                        }
                        n
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        total as f64 / SECONDS as f64
    };
    for threads in [1, 4] {
        println!(
            "bare claim statement, {threads} client(s)            {:>8.0} claims/s",
            bare(false, threads)
        );
        println!(
            "bare claim statement + write lock, {threads} client(s) {:>8.0} claims/s",
            bare(true, threads)
        );
    }

    let cycles = |db: &str, hosts: usize| -> f64 {
        let url = c.url_for(db);
        {
            let mut s = PgStore::connect(&url, "seed", &dir.path().join("seed.hwm")).unwrap();
            for i in 0..20_000 {
                s.add_task(&format!("t{i}"), "", 0, &[], OPERATOR, 0)
                    .unwrap();
            }
        }
        let until = Instant::now() + Duration::from_secs(SECONDS);
        let total: usize = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..hosts)
                .map(|h| {
                    let url = url.clone();
                    let hwm = dir.path().join(format!("{db}-{h}.hwm"));
                    sc.spawn(move || {
                        let mut s = PgStore::connect(&url, &format!("h{h}"), &hwm).unwrap();
                        let me = s
                            .register_session("agent", "x", "boot", None, None, None)
                            .unwrap()
                            .0;
                        let mut n = 0;
                        while Instant::now() < until {
                            let now = s.clock_ms().unwrap().unwrap();
                            let (c, _) =
                                s.claim(&me, None, Lease::until(now, now + LEASE)).unwrap();
                            s.done(&me, c.claim.task, None, None, now).unwrap();
                            n += 1;
                        }
                        n
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        total as f64 / SECONDS as f64
    };
    println!(
        "PgStore claim+done, 1 host                        {:>8.0} cycles/s",
        cycles("store1", 1)
    );
    println!(
        "PgStore claim+done, 4 hosts                       {:>8.0} cycles/s",
        cycles("store4", 4)
    );

    // Latency of one claim of a named task, then its release, on both stores.
    let latency = |s: &mut dyn Store, name: &str| {
        let me = s
            .register_session("agent", "x", "boot", None, None, None)
            .unwrap()
            .0;
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let mut v = Vec::new();
        for _ in 0..500 {
            let now = s.clock_ms().unwrap().unwrap_or(0);
            let t0 = Instant::now();
            s.claim(&me, Some(t.id), Lease::until(now, now + LEASE))
                .unwrap();
            v.push(t0.elapsed());
            s.release(Some(&me), t.id, None, None, now).unwrap();
        }
        report(name, v);
    };
    let mut sqlite = SqliteStore::open(&dir.path().join("board.db")).unwrap();
    latency(&mut sqlite, "claim latency, SQLite");
    let mut pg =
        PgStore::connect(&c.url_for("latency"), "lat", &dir.path().join("lat.hwm")).unwrap();
    latency(&mut pg, "claim latency, PostgreSQL (Unix socket)");
    println!("load after: {}", load());
}
