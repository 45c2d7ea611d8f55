//! `board log --follow`: the event stream, across board restarts and outages of a shared
//! store of any length.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use super::exit::fail;
use super::print;
use crate::proto::client::{self, Client};
use crate::proto::error::{BoardError, BoardResult, STORE_DOWN};
use crate::proto::glossary::EventKind;
use crate::proto::methods::LogResult;
use crate::proto::methods::{Call, LogParams};
use crate::proto::EventView;

pub(super) fn follow_log(json_out: bool, limit: i64) -> i32 {
    let run = || -> BoardResult<()> {
        let target = client::target()?;
        let mut c = Client::connect(&target, true)?;
        let log = c.ask::<LogResult>(Call::Log(LogParams {
            limit: Some(limit),
            after: None,
        }))?;
        let mut names = super::call::session_names(&target);
        let mut last = 0;
        for e in &log.result.events {
            let v = serde_json::to_value(e).map_err(|e| BoardError::internal(e.to_string()))?;
            print_event(json_out, &v, &names);
            last = e.id;
        }
        let mut outage = false;
        loop {
            let c = Client::connect(&target, true)?;
            let followed = c.follow(Some(last), |e| {
                if std::mem::take(&mut outage) {
                    eprintln!("board: the store is reachable again");
                }
                let event = EventView::deserialize(e).ok();
                // A session that started since: learn its name.
                if event
                    .as_ref()
                    .is_some_and(|ev| ev.kind == EventKind::SessionStart)
                {
                    names = super::call::session_names(&target);
                }
                print_event(json_out, e, &names);
                last = last.max(event.map_or(last, |ev| ev.id));
                true
            });
            match followed {
                Ok(()) => {}
                // The board runs but cannot reach its shared store: however long that lasts,
                // say so once and follow again from the last event shown.
                Err(e) if e.data.contains_key(STORE_DOWN) => {
                    if !std::mem::replace(&mut outage, true) {
                        eprintln!(
                            "board: {}; following again once it is back",
                            crate::proto::sanitize::inert(&e.message)
                        );
                    }
                    std::thread::sleep(Duration::from_millis(500));
                    continue;
                }
                Err(e) => return Err(e),
            }
            // The board went away (stopped or crashed): wait for it to come back, as the TUI
            // does, but do not start one: a deliberate `board stop` must stay stopped.
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if Client::connect(&target, false).is_ok() {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(BoardError::unavailable(
                        "the board went away and did not come back within 10 s",
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    match run() {
        Ok(()) => 0,
        Err(e) => fail(json_out, &e),
    }
}

pub(super) fn print_event(json_out: bool, e: &Value, names: &print::Names) {
    use std::io::Write;
    if json_out {
        println!("{e}");
    } else {
        println!("{}", print::event_line_named(e, names));
    }
    let _ = std::io::stdout().flush();
}
