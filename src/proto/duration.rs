//! Durations as `board.toml` and the command line write them (`"120s"`, `"250ms"`, `"2m"`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A duration written with a unit in `board.toml` (`"120s"`, `"250ms"`, `"2m"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub Duration);

impl Serialize for Dur {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(self.0).to_string())
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s)
            .map(Dur)
            .map_err(serde::de::Error::custom)
    }
}

/// Parses `"120s"`, `"250ms"`, `"2m"`, `"1h"`. A bare number is refused (the unit is required).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "duration {s:?} needs a unit, e.g. \"{t}s\" or \"{t}ms\""
        ));
    }
    humantime::parse_duration(t).map_err(|e| format!("bad duration {s:?}: {e}"))
}
