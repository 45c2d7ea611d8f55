//! A backlog as a file: what `board import` reads and `board export` writes.
//!
//! Three spellings of one shape ([`Backlog`]): TOML and JSON (the shape `agents/demo/backlog.toml`
//! uses: an optional `goal` and a list of `tasks`, each with a `key` other tasks name in their
//! `after`), and a Markdown checklist ([`markdown`]) in which nesting means dependencies: a parent
//! item waits for the items nested under it (they are its parts, done first).
//!
//! Keys are local to one file: an import gives every task a new id and turns the keys of `after`
//! into those ids. `board export` names task N `tN`. Claims and history are not part of a
//! backlog: a claimed task is exported as open.

pub mod markdown;
mod shape;

pub use crate::proto::glossary::BacklogState;
pub use shape::{Backlog, BacklogError, BacklogTask};

/// File formats of import and export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A Markdown checklist (nesting = dependencies).
    Md,
    /// TOML (`goal`, `[[tasks]]`).
    Toml,
    /// JSON (`{"goal": …, "tasks": […]}`).
    Json,
}

impl Format {
    /// The format a file name suggests (`.md`/`.markdown`, `.toml`, `.json`), if any.
    pub fn of_path(path: &std::path::Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(Format::Md),
            "toml" => Some(Format::Toml),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

impl Backlog {
    /// Parses `text` in `format` and checks it ([`Backlog::check`]).
    pub fn parse(text: &str, format: Format) -> Result<Backlog, BacklogError> {
        let b = match format {
            Format::Md => markdown::parse(text)?,
            Format::Toml => {
                toml::from_str(text).map_err(|e| BacklogError::Syntax(e.to_string()))?
            }
            Format::Json => {
                serde_json::from_str(text).map_err(|e| BacklogError::Syntax(e.to_string()))?
            }
        };
        b.check()?;
        Ok(b)
    }

    /// The backlog in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Md => markdown::render(self),
            // A backlog of strings and integers always serialises; an empty document is the
            // only possible fallback and never happens.
            Format::Toml => toml::to_string(self).unwrap_or_default(),
            Format::Json => {
                let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
                s.push('\n');
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(key: &str, after: &[&str]) -> BacklogTask {
        BacklogTask {
            key: key.into(),
            title: format!("do {key}"),
            body: String::new(),
            priority: 0,
            state: BacklogState::Open,
            after: after.iter().map(|s| s.to_string()).collect(),
            labels: Vec::new(),
            meant_for: None,
            review: None,
        }
    }

    #[test]
    fn the_demo_backlog_parses() {
        let b = Backlog::parse(
            include_str!("../../../agents/demo/backlog.toml"),
            Format::Toml,
        )
        .unwrap();
        assert_eq!(b.tasks.len(), 13);
        assert!(b.goal.is_some());
    }

    #[test]
    fn unknown_keys_duplicates_and_cycles_are_refused() {
        let b = Backlog {
            goal: None,
            tasks: vec![task("a", &["b"])],
        };
        assert!(b.check().unwrap_err().to_string().contains("\"b\""));
        let b = Backlog {
            goal: None,
            tasks: vec![task("a", &[]), task("a", &[])],
        };
        assert!(b.check().unwrap_err().to_string().contains("two tasks"));
        let b = Backlog {
            goal: None,
            tasks: vec![task("a", &["c"]), task("b", &["a"]), task("c", &["b"])],
        };
        assert!(b.check().unwrap_err().to_string().contains("itself"));
        let b = Backlog {
            goal: None,
            tasks: vec![task("a", &[]), task("b", &["a"]), task("c", &["a", "b"])],
        };
        b.check().unwrap();
    }

    #[test]
    fn toml_and_json_round_trip() {
        let mut b = Backlog {
            goal: Some("ship it".into()),
            tasks: vec![task("a", &[]), task("b", &["a"])],
        };
        b.tasks[0].state = BacklogState::Done;
        b.tasks[1].priority = -2;
        b.tasks[1].body = "two\nlines".into();
        for f in [Format::Toml, Format::Json, Format::Md] {
            let text = b.render(f);
            let back = Backlog::parse(&text, f).unwrap();
            assert_eq!(back.canonical(), b.canonical(), "{f:?}:\n{text}");
        }
    }

    #[test]
    fn unknown_fields_are_refused() {
        let e = Backlog::parse(
            "[[tasks]]\nkey = \"a\"\ntitle = \"x\"\nprio = 1\n",
            Format::Toml,
        )
        .unwrap_err();
        assert!(e.to_string().contains("prio"), "{e}");
    }
}
