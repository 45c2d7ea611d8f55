//! The board's events as a test reads them: a live `subscribe` stream ([`Events`]), matchers,
//! timestamps, and the figures a timing test prints.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use super::STEP;

/// A live `subscribe` stream, read on a thread: events stamped with their arrival time.
pub struct Events {
    rx: mpsc::Receiver<(Instant, Value)>,
    /// Every event received so far, in order.
    pub seen: Vec<(Instant, Value)>,
}

impl Events {
    /// Subscribes to the board at `socket`: events from now on, or with `after` = an event id,
    /// the ones after it first.
    pub fn subscribe(socket: &Path, after: Option<i64>) -> Events {
        let s = UnixStream::connect(socket).expect("connect for subscribe");
        let mut w = s.try_clone().unwrap();
        let params = match after {
            Some(a) => json!({ "after": a }),
            None => json!({}),
        };
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "subscribe", "params": params});
        w.write_all(format!("{req}\n").as_bytes()).unwrap();
        let mut r = BufReader::new(s);
        let mut ack = String::new();
        r.read_line(&mut ack).unwrap();
        assert!(ack.contains("subscribed"), "subscribe answered {ack:?}");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _keep = w;
            for line in r.lines() {
                let Ok(line) = line else { return };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if v["method"] == "event" && tx.send((Instant::now(), v["params"].clone())).is_err()
                {
                    return;
                }
            }
        });
        Events {
            rx,
            seen: Vec::new(),
        }
    }

    fn drain(&mut self) {
        while let Ok(e) = self.rx.try_recv() {
            self.seen.push(e);
        }
    }

    /// The next event not yet returned by `next`, waiting up to [`STEP`] for it.
    #[track_caller]
    pub fn next(&mut self) -> Value {
        let (at, e) = self
            .rx
            .recv_timeout(STEP)
            .unwrap_or_else(|err| panic!("no event within {STEP:?}: {err}"));
        self.seen.push((at, e.clone()));
        e
    }

    /// The first event (already received or arriving within `timeout`) matching `pred`.
    pub fn wait(
        &mut self,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<(Instant, Value)> {
        self.drain();
        if let Some(e) = self.seen.iter().find(|(_, e)| pred(e)) {
            return Some(e.clone());
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(e) => {
                    self.seen.push(e.clone());
                    if pred(&e.1) {
                        return Some(e);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Forgets the events received so far.
    pub fn clear(&mut self) {
        self.drain();
        self.seen.clear();
    }
}

/// Matches an event by kind and agent.
pub fn is(kind: &str, agent: &str) -> impl Fn(&Value) -> bool {
    let (kind, agent) = (kind.to_string(), agent.to_string());
    move |e| e["kind"] == kind.as_str() && e["agent"] == agent.as_str()
}

/// Wall-clock milliseconds since the epoch (to compare with the board's event timestamps).
pub fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// An event's `at` (RFC 3339 UTC) as wall-clock time.
pub fn event_time(e: &Value) -> SystemTime {
    let at = e["at"].as_str().expect("event has `at`");
    humantime::parse_rfc3339(at).unwrap_or_else(|err| panic!("bad timestamp {at:?}: {err}"))
}

/// An event's `at` as wall-clock ms since the epoch.
pub fn event_ms(e: &Value) -> i64 {
    event_time(e)
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The median, min and max of some durations, in ms.
pub fn stats(samples: &[Duration]) -> (f64, f64, f64) {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = ms.len();
    let median = if n % 2 == 1 {
        ms[n / 2]
    } else {
        (ms[n / 2 - 1] + ms[n / 2]) / 2.0
    };
    (median, ms[0], ms[n - 1])
}

/// How long a soak test runs: the seconds in the environment variable `var`, else `default`.
pub fn soak_secs(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// How many iterations a timing test makes: 20 with `BOARD_MEASURE=1`, else `normal`.
pub fn iterations(normal: usize) -> usize {
    match std::env::var("BOARD_MEASURE").as_deref() {
        Ok("1") => 20,
        _ => normal,
    }
}
