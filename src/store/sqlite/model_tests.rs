//! Model-based property test: random sequences of claims, renewals, `done`s, releases, sweeps
//! and clock jumps from several agent sessions, run against the real store (a SQLite file) and
//! against a small reference model of the lease rules; every answer and every task's
//! generation and holder must agree, and generations only ever rise.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;

use super::*;
use crate::proto::error::ErrorKind;

const LEASE: i64 = 1_000;
const AGENTS: usize = 3;
const TASKS: i64 = 3;

#[derive(Debug, Clone)]
enum Op {
    Claim(usize, i64),
    Done(usize, i64, Option<i64>),
    Release(usize, i64),
    Renew(usize),
    Sweep,
    Jump(i64),
}

fn op() -> impl Strategy<Value = Op> {
    let agent = 0..AGENTS;
    let task = 1..=TASKS;
    prop_oneof![
        3 => (agent.clone(), task.clone()).prop_map(|(a, t)| Op::Claim(a, t)),
        3 => (agent.clone(), task.clone(), proptest::option::of(0i64..6))
            .prop_map(|(a, t, g)| Op::Done(a, t, g)),
        1 => (agent.clone(), task).prop_map(|(a, t)| Op::Release(a, t)),
        2 => agent.prop_map(Op::Renew),
        1 => Just(Op::Sweep),
        2 => (0i64..2 * LEASE).prop_map(Op::Jump),
    ]
}

/// The reference model: per task its generation, live claim (holder, expiry), done state.
#[derive(Default)]
struct Model {
    now: i64,
    generation: HashMap<i64, i64>,
    holder: HashMap<i64, (usize, i64)>,
    done: HashMap<i64, (usize, i64)>,
    ever: HashSet<(usize, i64)>,
}

/// What a call answered, in the terms both sides can be compared in.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Granted(i64, bool),
    Done(i64, bool),
    Released,
    Refused(ErrorKind),
    Nothing,
}

impl Model {
    fn generation_of(&self, t: i64) -> i64 {
        self.generation.get(&t).copied().unwrap_or(0)
    }

    fn lapse_expired(&mut self, t: i64, only: Option<usize>) {
        if let Some(&(h, exp)) = self.holder.get(&t) {
            if exp <= self.now && only.is_none_or(|a| a == h) {
                self.holder.remove(&t);
            }
        }
    }

    /// Why a holder write of `a` on `t` is refused (after its expired claim was lapsed).
    fn refusal(&self, a: usize, t: i64) -> ErrorKind {
        match self.holder.get(&t) {
            Some(&(h, _)) if h != a && !self.ever.contains(&(a, t)) => ErrorKind::Conflict,
            _ => ErrorKind::Lapsed,
        }
    }

    fn apply(&mut self, op: &Op) -> Answer {
        match *op {
            Op::Jump(ms) => {
                self.now += ms;
                Answer::Nothing
            }
            Op::Sweep => {
                let due: Vec<i64> = self
                    .holder
                    .iter()
                    .filter(|(_, (_, exp))| *exp <= self.now)
                    .map(|(t, _)| *t)
                    .collect();
                for t in due {
                    self.holder.remove(&t);
                }
                Answer::Nothing
            }
            Op::Renew(a) => {
                let now = self.now;
                for (_, (h, exp)) in self.holder.iter_mut() {
                    if *h == a && *exp > now {
                        *exp = now + LEASE;
                    }
                }
                Answer::Nothing
            }
            Op::Claim(a, t) => {
                if let Some(&(h, exp)) = self.holder.get(&t) {
                    if h == a && exp > self.now {
                        self.holder.insert(t, (a, exp.max(self.now + LEASE)));
                        return Answer::Granted(self.generation_of(t), true);
                    }
                }
                self.lapse_expired(t, None);
                if self.done.contains_key(&t) {
                    return Answer::Refused(ErrorKind::NoReadyTask);
                }
                if self.holder.contains_key(&t) {
                    return Answer::Refused(ErrorKind::Conflict);
                }
                let g = self.generation_of(t) + 1;
                self.generation.insert(t, g);
                self.holder.insert(t, (a, self.now + LEASE));
                self.ever.insert((a, t));
                Answer::Granted(g, false)
            }
            Op::Done(a, t, given) => {
                let g = self.generation_of(t);
                if let Some(&(h, exp)) = self.holder.get(&t) {
                    if h == a && exp > self.now && given.is_none_or(|x| x == g) {
                        self.holder.remove(&t);
                        self.done.insert(t, (a, g));
                        return Answer::Done(g, false);
                    }
                }
                if let Some(&(by, dg)) = self.done.get(&t) {
                    if by == a && given.is_none_or(|x| x == dg) {
                        return Answer::Done(dg, true);
                    }
                }
                self.lapse_expired(t, Some(a));
                Answer::Refused(self.refusal(a, t))
            }
            Op::Release(a, t) => {
                if let Some(&(h, exp)) = self.holder.get(&t) {
                    if h == a && exp > self.now {
                        self.holder.remove(&t);
                        return Answer::Released;
                    }
                }
                self.lapse_expired(t, Some(a));
                Answer::Refused(self.refusal(a, t))
            }
        }
    }
}

fn run_store(s: &mut dyn Store, agents: &[String], now: i64, op: &Op) -> Answer {
    let refused = |e: BoardError| Answer::Refused(e.kind);
    match *op {
        Op::Jump(_) => Answer::Nothing,
        Op::Sweep => {
            s.lapse_due(now, LEASE).unwrap();
            Answer::Nothing
        }
        Op::Renew(a) => {
            s.renew(&agents[a], Lease::until(now, now + LEASE)).unwrap();
            Answer::Nothing
        }
        Op::Claim(a, t) => {
            match s.claim(&agents[a], Some(TaskId(t)), Lease::until(now, now + LEASE)) {
                Ok((c, _)) => Answer::Granted(c.claim.generation.0, c.already),
                Err(e) => refused(e),
            }
        }
        Op::Done(a, t, g) => match s.done(&agents[a], TaskId(t), g.map(Generation), None, now) {
            Ok((d, _)) => Answer::Done(d.generation.0, d.already),
            Err(e) => refused(e),
        },
        Op::Release(a, t) => match s.release(Some(&agents[a]), TaskId(t), None, None, now) {
            Ok(_) => Answer::Released,
            Err(e) => refused(e),
        },
    }
}

/// Runs `ops` on the store `s` and on the model side by side.
fn follow(s: &mut dyn Store, ops: &[Op]) -> Result<(), TestCaseError> {
    let agents: Vec<String> = (0..AGENTS)
        .map(|i| {
            s.register_session(&format!("a{i}"), "h", "boot", None, None, None)
                .unwrap()
                .0
        })
        .collect();
    for t in 1..=TASKS {
        s.add_task(&format!("t{t}"), "", 0, &[], OPERATOR, 0)
            .unwrap();
    }
    let mut model = Model::default();
    let mut highest: HashMap<i64, i64> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        let want = model.apply(op);
        let got = run_store(s, &agents, model.now, op);
        prop_assert_eq!(&got, &want, "step {} {:?}", i, op);
        for t in 1..=TASKS {
            let v = s.task(TaskId(t), model.now).unwrap();
            prop_assert_eq!(
                v.generation.0,
                model.generation_of(t),
                "generation of task {} after {:?}",
                t,
                op
            );
            let holder = model.holder.get(&t).map(|(a, _)| agents[*a].clone());
            prop_assert_eq!(v.holder, holder, "holder of task {} after {:?}", t, op);
            let h = highest.entry(t).or_insert(0);
            prop_assert!(v.generation.0 >= *h, "generation of task {} went back", t);
            *h = v.generation.0;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_store_follows_the_lease_rules_under_random_operations_and_clock_jumps(
        ops in proptest::collection::vec(op(), 1..40)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SqliteStore::open(&dir.path().join("board.db")).unwrap();
        follow(&mut s, &ops)?;
    }
}

proptest! {
    // Each case is a new database on the private cluster (~0.1 s): fewer cases than SQLite's.
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn the_postgres_store_follows_the_same_lease_rules(
        ops in proptest::collection::vec(op(), 1..40)
    ) {
        if let Some(why) = pg::cluster::skip_reason() {
            eprintln!("skipped: {why}");
            return Ok(());
        }
        let (url, dir) = pg::tests::fresh_database();
        let mut s = PgStore::connect(&url, "model", &dir.path().join("hwm")).unwrap();
        s.follow_caller_clock();
        follow(&mut s, &ops)?;
    }
}
