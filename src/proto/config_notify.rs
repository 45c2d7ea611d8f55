//! `[notify]` of `board.toml`: which notices leave the terminal, and through which channels
//! (see `daemon::notify`). Parsed as part of [`Config`](crate::proto::config::Config).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::proto::duration::Dur;

/// `[notify]`: notifications that leave the terminal (see `daemon::notify`). Off by default
/// except the terminal kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifySection {
    /// Freedesktop notifications over the session D-Bus (`org.freedesktop.Notifications`).
    pub desktop: bool,
    /// OSC 9 / OSC 777 and the bell to the terminal of every running `board tui`.
    pub terminal: bool,
    /// A program and its arguments, run once per notice with the notice as one JSON object on
    /// stdin (keys `kind`, `agent`, `task`, `text`, `at`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// How long `command` may run before it is killed (default 10 s).
    pub command_timeout: Dur,
    /// Which notices are sent (default: all of them).
    pub events: Vec<crate::proto::glossary::NoticeKind>,
}

impl Default for NotifySection {
    fn default() -> Self {
        NotifySection {
            desktop: false,
            terminal: true,
            command: None,
            command_timeout: Dur(Duration::from_secs(10)),
            events: crate::proto::glossary::NoticeKind::ALL.to_vec(),
        }
    }
}

impl NotifySection {
    /// Whether notices of `kind` are sent at all.
    pub fn wants(&self, kind: crate::proto::glossary::NoticeKind) -> bool {
        self.events.contains(&kind)
    }

    /// Whether any channel is on.
    pub fn any_channel(&self) -> bool {
        self.desktop || self.terminal || self.command.is_some()
    }

    /// Refuses an empty program, a NUL in the command, a zero timeout (the message names the key).
    pub(crate) fn validate(&self) -> Result<(), String> {
        match &self.command {
            Some(c) if c.first().is_none_or(|p| p.trim().is_empty()) => {
                return Err(
                    "notify.command needs a program: e.g. [\"ntfy\", \"publish\", \"my-topic\"]"
                        .into(),
                )
            }
            Some(c) if c.iter().any(|a| a.contains('\0')) => {
                return Err("notify.command must not contain a NUL character".into())
            }
            _ => {}
        }
        if self.command_timeout.0.is_zero() {
            return Err("notify.command_timeout must be longer than 0s".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use crate::proto::config::{Config, NotifySection};

    #[test]
    fn notify_is_terminal_only_by_default_and_takes_every_kind() {
        let c = Config::parse("", Path::new("b")).unwrap();
        assert!(c.notify.terminal && !c.notify.desktop && c.notify.command.is_none());
        assert_eq!(c.notify.events, crate::proto::glossary::NoticeKind::ALL);
        let c = Config::parse(&Config::default_text("x"), Path::new("b")).unwrap();
        assert_eq!(c.notify, NotifySection::default());
    }

    #[test]
    fn notify_reads_every_key() {
        let c = Config::parse(
            "[notify]\ndesktop = true\nterminal = false\ncommand = [\"ntfy\", \"publish\", \"t\"]\ncommand_timeout = \"2s\"\nevents = [\"question\", \"finished\"]\n",
            Path::new("b"),
        )
        .unwrap();
        assert!(c.notify.desktop && !c.notify.terminal);
        assert_eq!(c.notify.command.as_deref().unwrap()[0], "ntfy");
        assert_eq!(c.notify.command_timeout.0, Duration::from_secs(2));
        use crate::proto::glossary::NoticeKind;
        assert!(c.notify.wants(NoticeKind::Finished) && !c.notify.wants(NoticeKind::Message));
    }

    #[test]
    fn notify_refuses_unknown_event_names_keys_and_empty_commands() {
        let e = Config::parse("[notify]\nevents = [\"questions\"]\n", Path::new("b")).unwrap_err();
        assert!(e.to_string().contains("questions"), "{e}");
        let e = Config::parse("[notify]\ndesktp = true\n", Path::new("b")).unwrap_err();
        assert!(e.to_string().contains("desktp"), "{e}");
        let e = Config::parse("[notify]\ncommand = []\n", Path::new("b")).unwrap_err();
        assert!(e.to_string().contains("notify.command"), "{e}");
        let e = Config::parse("[notify]\ncommand_timeout = \"0s\"\n", Path::new("b")).unwrap_err();
        assert!(e.to_string().contains("command_timeout"), "{e}");
    }
}
