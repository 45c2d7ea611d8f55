//! A lean parse of the few command lines an agent's shell runs on every step (`board claim`,
//! `board claim ID`, `board done ID`, `board check [ID]`, `board renew`, each with or without
//! `--json`), before clap.
//!
//! Why: building clap's whole command tree (every subcommand, its help and its checks) is about
//! 410 000 instructions and a few dozen page faults, a third of a `board claim` process's own
//! work. These shapes have no option to check, so they become the same [`Cli`] clap would make
//! without touching clap. Anything else, including every malformed or unusual form of these
//! commands (`--help`, `+5`, a second `--json`, `--generation`), returns `None` and goes to
//! clap, so errors, help and defaults stay clap's.

use std::ffi::OsString;
use std::time::Duration;

use super::{Cli, Cmd};
use crate::proto::glossary::TaskId;

/// `claim --wait`'s default `--timeout` ("1h", as clap's `default_value`).
const CLAIM_WAIT_DEFAULT: Duration = Duration::from_secs(3600);

/// The [`Cli`] for `args` (the whole command line, program name first) when it is one of the
/// hot shapes; `None` sends it to clap.
pub fn parse(args: &[OsString]) -> Option<Cli> {
    let mut json = false;
    let mut words: [&str; 2] = [""; 2];
    let mut n = 0;
    for a in args.get(1..)? {
        let a = a.to_str()?;
        if a == "--json" && !json {
            json = true;
        } else if n < words.len() && !a.starts_with('-') {
            words[n] = a;
            n += 1;
        } else {
            return None;
        }
    }
    let command = match &words[..n] {
        ["claim"] => Cmd::Claim {
            task: None,
            label: None,
            wait: false,
            timeout: CLAIM_WAIT_DEFAULT,
        },
        ["claim", id] => Cmd::Claim {
            task: Some(task_id(id)?),
            label: None,
            wait: false,
            timeout: CLAIM_WAIT_DEFAULT,
        },
        ["done", id] => Cmd::Done {
            task: task_id(id)?,
            note: None,
            generation: None,
            commit: None,
        },
        ["check"] => Cmd::Check {
            task: None,
            generation: None,
        },
        ["check", id] => Cmd::Check {
            task: Some(task_id(id)?),
            generation: None,
        },
        ["renew"] => Cmd::Renew,
        _ => return None,
    };
    Some(Cli {
        json,
        command: Some(command),
    })
}

/// A task id written as plain decimal digits that fit an `i64`; anything else is clap's to judge.
fn task_id(s: &str) -> Option<TaskId> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn argv(line: &str) -> Vec<OsString> {
        std::iter::once("board")
            .chain(line.split_whitespace())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn hot_shapes_parse_exactly_as_clap_does() {
        for line in [
            "claim",
            "claim 7",
            "claim 007",
            "--json claim 12",
            "claim --json",
            "claim 12 --json",
            "done 3",
            "--json done 3",
            "done 9223372036854775807",
            "check",
            "check 4",
            "check --json 4",
            "renew",
            "renew --json",
        ] {
            let args = argv(line);
            let lean = parse(&args).unwrap_or_else(|| panic!("{line:?} not taken"));
            let clap = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            assert_eq!(format!("{lean:?}"), format!("{clap:?}"), "{line:?}");
        }
    }

    #[test]
    fn everything_else_is_left_to_clap() {
        for line in [
            "",
            "--json",
            "claim --wait",
            "claim 1 2",
            "claim -1",
            "claim +1",
            "claim x",
            "claim 99999999999999999999",
            "done",
            "done 3 --generation 2",
            "done 3 --note hi",
            "--json --json claim",
            "claim --help",
            "help claim",
            "ready",
            "list --json",
            "renew 3",
            "check 1 --generation 2",
            "claim -- 3",
        ] {
            assert!(parse(&argv(line)).is_none(), "{line:?} was taken");
        }
        let not_utf8 = vec![
            OsString::from("board"),
            OsString::from("done"),
            std::os::unix::ffi::OsStringExt::from_vec(vec![0xff]),
        ];
        assert!(parse(&not_utf8).is_none());
    }
}
