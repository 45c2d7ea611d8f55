//! A backlog as a Markdown checklist.
//!
//! ```markdown
//! # Ship v0.1 of the link shortener          ← the first level-1 heading is the goal
//!
//! - [ ] Release v0.1                         ← waits for the items nested under it
//!   - [ ] Implement the store <!-- key=store priority=2 -->
//!     Use SQLite; one table.                 ← indented text under an item is its body
//!     - [x] Design the schema                ← done
//!   - [ ] Write the docs <!-- after=store -->
//!   - [-] Add a web UI                       ← cancelled
//! ```
//!
//! Nesting means dependencies: an item waits for every item nested directly under it (its parts
//! are done first). Siblings are independent. More dependencies, a key to refer to an item and a
//! priority go in an HTML comment at the end of the item's line (invisible when rendered):
//! `<!-- key=K after=K1,K2 priority=N -->`. Items are `-`, `*`, `+` or `1.` list items with a
//! checkbox: `[ ]` open, `[x]` done, `[-]` or `[~]` cancelled. Other lines (prose, headings,
//! plain bullets) are not tasks. Keys are letters, digits, `_`, `-` and `.`; an item without
//! one gets `#N` (its position), which no written key can equal.

use std::collections::{HashMap, HashSet};

use super::shape::{Backlog, BacklogError, BacklogTask};
use crate::proto::glossary::BacklogState;

/// Indentation width of a line's leading whitespace (a tab counts 4).
fn indent_of(line: &str) -> usize {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// A checklist item: its indent, the column its text starts at, its state and its text.
struct Item<'a> {
    indent: usize,
    content_col: usize,
    state: BacklogState,
    text: &'a str,
}

fn item(line: &str) -> Option<Item<'_>> {
    let indent = indent_of(line);
    let rest = line.trim_start_matches([' ', '\t']);
    let marker_len = if rest.starts_with("- ") || rest.starts_with("* ") || rest.starts_with("+ ") {
        2
    } else {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let after = &rest[digits..];
        if digits == 0 || !(after.starts_with(". ") || after.starts_with(") ")) {
            return None;
        }
        digits + 2
    };
    let boxed = rest[marker_len..].trim_start_matches(' ');
    let state = match boxed.get(..3)? {
        "[ ]" => BacklogState::Open,
        "[x]" | "[X]" => BacklogState::Done,
        "[-]" | "[~]" => BacklogState::Cancelled,
        _ => return None,
    };
    let text = &boxed[3..];
    if !(text.is_empty() || text.starts_with(' ')) {
        return None;
    }
    Some(Item {
        indent,
        content_col: indent + marker_len,
        state,
        text: text.trim(),
    })
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Attributes of an item's trailing `<!-- … -->`.
#[derive(Default)]
struct Attrs {
    key: Option<String>,
    after: Vec<String>,
    priority: i64,
    labels: Vec<String>,
    meant_for: Option<String>,
    review: Option<bool>,
}

/// Splits `title <!-- k=v … -->` into the title and its attributes.
fn split_attrs(text: &str, line: usize) -> Result<(&str, Attrs), BacklogError> {
    let bad = |message: String| BacklogError::Line { line, message };
    let Some(inner) = text.strip_suffix("-->") else {
        return Ok((text, Attrs::default()));
    };
    let Some(open) = inner.rfind("<!--") else {
        return Ok((text, Attrs::default()));
    };
    let mut attrs = Attrs::default();
    for word in inner[open + 4..].split_whitespace() {
        let Some((k, v)) = word.split_once('=') else {
            return Err(bad(format!(
                "{word:?} in the item's comment is not KEY=VALUE (key=, after=, priority=, labels=, for=, review=)"
            )));
        };
        match k {
            "key" if valid_key(v) => attrs.key = Some(v.to_string()),
            "key" => {
                return Err(bad(format!(
                    "key {v:?}: use letters, digits, `_`, `-` and `.`"
                )))
            }
            "after" => attrs
                .after
                .extend(v.split(',').filter(|s| !s.is_empty()).map(str::to_string)),
            // Checked with the rest of the task by the board's import.
            "labels" => attrs
                .labels
                .extend(v.split(',').filter(|s| !s.is_empty()).map(str::to_string)),
            "for" => attrs.meant_for = Some(v.to_string()),
            "review" => {
                attrs.review = Some(match v {
                    "yes" => true,
                    "no" => false,
                    _ => return Err(bad(format!("review {v:?}: use review=yes or review=no"))),
                })
            }
            "priority" => {
                attrs.priority = v
                    .parse()
                    .map_err(|_| bad(format!("priority {v:?} is not an integer")))?
            }
            other => {
                return Err(bad(format!(
                    "unknown attribute {other:?} in the item's comment (key=, after=, priority=, labels=, for=, review=)"
                )))
            }
        }
    }
    Ok((inner[..open].trim_end(), attrs))
}

/// Parses a checklist into a backlog (not yet checked: see [`Backlog::check`]).
pub fn parse(text: &str) -> Result<Backlog, BacklogError> {
    let mut backlog = Backlog::default();
    // Open items by nesting: (indent, index into tasks).
    let mut stack: Vec<(usize, usize)> = Vec::new();
    // The last item, while the lines after it are its body: (index, indent, content column).
    let mut body_of: Option<(usize, usize, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        if let Some(it) = item(line) {
            let (title, attrs) = split_attrs(it.text, line_no)?;
            if title.is_empty() {
                return Err(BacklogError::Line {
                    line: line_no,
                    message: "the item has no title".into(),
                });
            }
            let index = backlog.tasks.len();
            let key = attrs.key.unwrap_or_else(|| format!("#{}", index + 1));
            while stack.last().is_some_and(|(ind, _)| *ind >= it.indent) {
                stack.pop();
            }
            if let Some((_, parent)) = stack.last() {
                backlog.tasks[*parent].after.push(key.clone());
            }
            backlog.tasks.push(BacklogTask {
                key,
                title: title.to_string(),
                body: String::new(),
                priority: attrs.priority,
                state: it.state,
                after: attrs.after,
                labels: attrs.labels,
                meant_for: attrs.meant_for,
                review: attrs.review,
            });
            stack.push((it.indent, index));
            body_of = Some((index, it.indent, it.content_col));
            continue;
        }
        if line.trim().is_empty() {
            if let Some((i, _, _)) = body_of {
                let body = &mut backlog.tasks[i].body;
                if !body.is_empty() {
                    body.push('\n');
                }
            }
            continue;
        }
        match body_of {
            Some((i, indent, col)) if indent_of(line) > indent => {
                let body = &mut backlog.tasks[i].body;
                if !body.is_empty() && !body.ends_with("\n\n") {
                    body.push('\n');
                }
                body.push_str(strip_columns(line, col));
            }
            _ => {
                body_of = None;
                if backlog.goal.is_none() && backlog.tasks.is_empty() {
                    if let Some(g) = line.strip_prefix("# ") {
                        backlog.goal = Some(g.trim().to_string());
                    }
                }
            }
        }
    }
    for t in &mut backlog.tasks {
        let trimmed = t.body.trim_end_matches('\n').len();
        t.body.truncate(trimmed);
    }
    Ok(backlog)
}

/// `line` without up to `col` columns of leading whitespace.
fn strip_columns(line: &str, col: usize) -> &str {
    let mut width = 0;
    for (i, c) in line.char_indices() {
        if width >= col || !(c == ' ' || c == '\t') {
            return &line[i..];
        }
        width += if c == '\t' { 4 } else { 1 };
    }
    ""
}

/// Writes a backlog as a checklist that [`parse`] reads back to the same plan, with the tasks
/// in the same order (so an import numbers them alike).
///
/// A task is nested under the deepest item on the current path that waits for it, which keeps
/// the file's order the backlog's order; dependencies that nesting cannot show go in `after=`.
pub fn render(b: &Backlog) -> String {
    let (depth, parent) = nesting(b);
    // `after=` holds what nesting does not say; those targets need their key written.
    let explicit = explicit_after(b, &parent);
    let named: HashSet<&str> = explicit.iter().flatten().copied().collect();
    let mut out = String::new();
    if let Some(g) = &b.goal {
        out.push_str(&format!("# {}\n\n", one_line(g)));
    }
    for (i, t) in b.tasks.iter().enumerate() {
        let attrs = attributes(t, named.contains(t.key.as_str()), &explicit[i]);
        render_task(&mut out, t, depth[i], &attrs);
    }
    out
}

/// Each task's nesting depth and the item it is nested under: the deepest item on the current
/// path that waits for it, or none (depth 0).
fn nesting(b: &Backlog) -> (Vec<usize>, Vec<Option<usize>>) {
    let waits_for = |p: usize, c: usize| b.tasks[p].after.iter().any(|a| a == &b.tasks[c].key);
    let mut depth = vec![0usize; b.tasks.len()];
    let mut parent: Vec<Option<usize>> = vec![None; b.tasks.len()];
    let mut path: Vec<usize> = Vec::new();
    for i in 0..b.tasks.len() {
        match path.iter().rposition(|&p| waits_for(p, i)) {
            Some(at) => {
                path.truncate(at + 1);
                parent[i] = Some(path[at]);
                depth[i] = at + 1;
            }
            None => path.clear(),
        }
        path.push(i);
    }
    (depth, parent)
}

/// Per task, the keys it waits for that are not nested directly under it (its `after=`).
fn explicit_after<'a>(b: &'a Backlog, parent: &[Option<usize>]) -> Vec<Vec<&'a str>> {
    let index: HashMap<&str, usize> = b
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.key.as_str(), i))
        .collect();
    b.tasks
        .iter()
        .enumerate()
        .map(|(p, t)| {
            t.after
                .iter()
                .filter(|a| index.get(a.as_str()).is_none_or(|&c| parent[c] != Some(p)))
                .map(String::as_str)
                .collect()
        })
        .collect()
}

/// The `key=… after=… priority=… labels=… for=… review=…` attributes of a task's comment;
/// `key=` only when another task names it in `after=` (`named`) and it is a writable key.
fn attributes(t: &BacklogTask, named: bool, after: &[&str]) -> Vec<String> {
    let mut attrs = Vec::new();
    if named && valid_key(&t.key) {
        attrs.push(format!("key={}", t.key));
    }
    if !after.is_empty() {
        attrs.push(format!("after={}", after.join(",")));
    }
    if t.priority != 0 {
        attrs.push(format!("priority={}", t.priority));
    }
    // Labels and `for` names hold no whitespace or comma, so they stay one attribute.
    if !t.labels.is_empty() {
        attrs.push(format!("labels={}", t.labels.join(",")));
    }
    if let Some(whom) = &t.meant_for {
        attrs.push(format!("for={whom}"));
    }
    if let Some(r) = t.review {
        attrs.push(format!("review={}", if r { "yes" } else { "no" }));
    }
    attrs
}

/// A task's checklist item at `depth` (two spaces a level), its attributes' comment, then its
/// body indented under it (blank lines kept blank).
fn render_task(out: &mut String, t: &BacklogTask, depth: usize, attrs: &[String]) {
    let pad = "  ".repeat(depth);
    let mark = match t.state {
        BacklogState::Done => "x",
        BacklogState::Cancelled => "-",
        BacklogState::Open => " ",
    };
    out.push_str(&format!("{pad}- [{mark}] {}", one_line(&t.title)));
    if !attrs.is_empty() {
        out.push_str(&format!(" <!-- {} -->", attrs.join(" ")));
    }
    out.push('\n');
    for l in t.body.lines() {
        if l.trim().is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("{pad}  {l}\n"));
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = "\
# Ship the shortener

Some prose that is not a task.

- [ ] Release v0.1
  - [ ] Implement the store <!-- key=store priority=2 -->
    Use SQLite; one table.

    Second paragraph.
    - [x] Design the schema
  - [ ] Write the docs <!-- after=store -->
  - [-] Add a web UI
* [ ] Unrelated chore
1. [X] Numbered and done
";

    #[test]
    fn nesting_means_the_parent_waits_for_its_children() {
        let b = parse(PLAN).unwrap();
        b.check().unwrap();
        assert_eq!(b.goal.as_deref(), Some("Ship the shortener"));
        let titles: Vec<&str> = b.tasks.iter().map(|t| t.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "Release v0.1",
                "Implement the store",
                "Design the schema",
                "Write the docs",
                "Add a web UI",
                "Unrelated chore",
                "Numbered and done"
            ]
        );
        assert_eq!(b.tasks[0].after, ["store", "#4", "#5"]);
        assert_eq!(b.tasks[1].after, ["#3"]);
        assert_eq!(b.tasks[1].priority, 2);
        assert_eq!(
            b.tasks[1].body,
            "Use SQLite; one table.\n\nSecond paragraph."
        );
        assert_eq!(b.tasks[2].state, BacklogState::Done);
        assert_eq!(b.tasks[3].after, ["store"]);
        assert_eq!(b.tasks[4].state, BacklogState::Cancelled);
        assert!(b.tasks[5].after.is_empty());
        assert_eq!(b.tasks[6].state, BacklogState::Done);
    }

    #[test]
    fn rendering_reads_back_to_the_same_plan_and_is_stable() {
        let b = parse(PLAN).unwrap();
        let text = render(&b);
        let back = parse(&text).unwrap();
        assert_eq!(back.canonical(), b.canonical(), "{text}");
        assert_eq!(render(&back), text);
    }

    #[test]
    fn bad_attributes_name_the_line() {
        let e = parse("- [ ] a\n- [ ] b <!-- prio=2 -->\n").unwrap_err();
        assert_eq!(e.to_string().split(':').next(), Some("line 2"), "{e}");
        let e = parse("- [ ] <!-- key=a -->\n").unwrap_err();
        assert!(e.to_string().contains("no title"), "{e}");
        let e = parse("- [ ] x <!-- priority=high -->\n").unwrap_err();
        assert!(e.to_string().contains("priority"), "{e}");
    }

    #[test]
    fn dependencies_nesting_cannot_show_go_in_after() {
        let b = Backlog {
            goal: None,
            tasks: vec![
                BacklogTask {
                    key: "t1".into(),
                    title: "base".into(),
                    body: String::new(),
                    priority: 0,
                    state: BacklogState::Open,
                    after: vec![],
                    labels: vec![],
                    meant_for: None,
                    review: None,
                },
                BacklogTask {
                    key: "t2".into(),
                    title: "needs base".into(),
                    body: String::new(),
                    priority: 0,
                    state: BacklogState::Open,
                    after: vec!["t1".into()],
                    labels: vec![],
                    meant_for: None,
                    review: None,
                },
            ],
        };
        let text = render(&b);
        assert_eq!(
            text,
            "- [ ] base <!-- key=t1 -->\n- [ ] needs base <!-- after=t1 -->\n"
        );
        assert_eq!(parse(&text).unwrap().canonical(), b.canonical());
    }

    proptest::proptest! {
        /// Any backlog (a random DAG: each task may wait for any earlier or later one, as long
        /// as no cycle forms) reads back from Markdown as the same plan, and rendering is stable.
        #[test]
        fn any_backlog_survives_markdown(
            edges in proptest::collection::vec((0usize..12, 0usize..12), 0..30),
            states in proptest::collection::vec(0usize..3, 12),
            n in 1usize..12,
        ) {
            let mut tasks: Vec<BacklogTask> = (0..n)
                .map(|i| BacklogTask {
                    key: format!("t{}", i + 1),
                    title: format!("task {i}"),
                    body: if i % 3 == 0 { format!("body of {i}\n\n  indented") } else { String::new() },
                    priority: i as i64 % 4 - 1,
                    state: BacklogState::ALL[states[i]],
                    after: vec![],
                    labels: if i % 2 == 0 { vec!["ui".into(), format!("l{i}")] } else { vec![] },
                    meant_for: (i % 5 == 0).then(|| "reviewer".into()),
                    review: [None, Some(true), Some(false)][i % 3],
                })
                .collect();
            // Edges from a random permutation order keep it acyclic: i waits for j only if
            // i's rank is above j's.
            let rank = |i: usize| (i * 7 + 3) % 13;
            for (a, b) in edges {
                let (a, b) = (a % n, b % n);
                if a != b && rank(a) > rank(b) && !tasks[a].after.contains(&format!("t{}", b + 1)) {
                    tasks[a].after.push(format!("t{}", b + 1));
                }
            }
            let b = Backlog { goal: Some("g".into()), tasks };
            b.check().unwrap();
            let text = render(&b);
            let back = parse(&text).unwrap();
            back.check().unwrap();
            proptest::prop_assert_eq!(back.canonical(), b.canonical(), "{}", text);
            proptest::prop_assert_eq!(render(&back), text);
        }
    }
}
