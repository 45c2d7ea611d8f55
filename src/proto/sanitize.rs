//! Making untrusted text (task titles, notes, questions written by agents) inert for terminals.
//!
//! Text shown in the TUI or in human-readable CLI output must not be able to move the cursor,
//! recolour, retitle or otherwise drive the terminal, nor reorder what the human reads. The
//! functions here make every control character visible instead of acting on it:
//!
//! | input                                        | output                                   |
//! |----------------------------------------------|------------------------------------------|
//! | `\n`                                         | kept by [`inert`], a space in [`one_line`] |
//! | `\r\n`                                       | as `\n`                                  |
//! | `\t`                                         | a space                                  |
//! | other C0 controls U+0000–U+001F              | their Control Picture: ESC → `␛`, BEL → `␇`, lone CR → `␍` |
//! | DEL U+007F                                   | `␡`                                      |
//! | C1 controls U+0080–U+009F (CSI, OSC, NEL…)   | `�` (U+FFFD)                             |
//! | bidi embeddings/overrides/isolates U+202A–U+202E, U+2066–U+2069 | `�`                   |
//!
//! So `"\x1b[31mred"` shows as `␛[31mred`. Everything else passes through unchanged.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

const REPLACEMENT: char = '\u{FFFD}';
const ELLIPSIS: char = '…';

/// Returns `s` with terminal control made inert (see the module table); newlines are kept.
/// The output contains no C0 control except `\n`, no DEL, no C1 control and no bidi control.
/// Idempotent: `inert(&inert(s)) == inert(s)`.
pub fn inert(s: &str) -> String {
    neutralise(s, '\n')
}

/// As [`inert`], but line breaks become a space, for one-line contexts (a table cell, a
/// status line). The output contains no control character at all.
pub fn one_line(s: &str) -> String {
    neutralise(s, ' ')
}

/// Truncates `s` to at most `max_cols` terminal columns, ending with `…` when something was cut.
///
/// Widths are those of `unicode-width` (wide CJK/emoji characters take 2 columns, combining marks
/// 0); a wide character that does not fit entirely is dropped, never split. The result fits both
/// per-character and whole-string width measures. Returns `s` unchanged when it fits; when it
/// does not and `max_cols == 0`, returns `""`. Meant for text that went through [`one_line`] (controls count as 0).
pub fn truncate_width(s: &str, max_cols: usize) -> String {
    if width(s) <= max_cols {
        return s.to_owned();
    }
    // `…` takes one column.
    let Some(budget) = max_cols.checked_sub(1) else {
        return String::new();
    };
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > budget {
            break;
        }
        used += w;
        out.push(c);
    }
    // Whole-string width can exceed the per-character sum (e.g. an emoji variation selector).
    while out.width() > budget {
        out.pop();
    }
    out.push(ELLIPSIS);
    out
}

/// Display width used by [`truncate_width`]: the larger of the whole-string and per-character
/// measures, since terminals differ in which one they follow.
fn width(s: &str) -> usize {
    let per_char: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    per_char.max(s.width())
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn neutralise(s: &str, newline: char) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let shown = match c {
            '\r' if chars.peek() == Some(&'\n') => continue,
            '\n' => newline,
            '\t' => ' ',
            // Control Pictures: U+2400 + the code (␀ … ␟).
            '\0'..='\u{1F}' => char::from_u32(0x2400 + u32::from(c)).unwrap_or(REPLACEMENT),
            '\u{7F}' => '\u{2421}',
            '\u{80}'..='\u{9F}' => REPLACEMENT,
            c if is_bidi_control(c) => REPLACEMENT,
            c => c,
        };
        out.push(shown);
    }
    out
}

/// A JSON value as one inert line of text for people (strings without their quotes, `null` as
/// nothing), through [`one_line`].
pub fn value_line(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(x) => one_line(x),
        serde_json::Value::Null => String::new(),
        other => one_line(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_become_visible() {
        assert_eq!(inert("\x1b[31mred\x1b[0m"), "␛[31mred␛[0m");
        assert_eq!(inert("\x1b]0;pwned\x07"), "␛]0;pwned␇");
        assert_eq!(inert("a\tb\r\nc\rd\x7f"), "a b\nc␍d␡");
        assert_eq!(inert("\u{9b}31m \u{85}"), "\u{FFFD}31m \u{FFFD}");
        assert_eq!(inert("abc\u{202E}fed\u{2066}x\u{2069}"), "abc�fed�x�");
        assert_eq!(
            inert("plain, ünïcødé 漢字 🦀\n"),
            "plain, ünïcødé 漢字 🦀\n"
        );
        assert_eq!(one_line("two\r\nlines\n"), "two lines ");
    }

    #[test]
    fn truncates_by_columns() {
        assert_eq!(truncate_width("hello", 5), "hello");
        assert_eq!(truncate_width("hello", 4), "hel…");
        assert_eq!(truncate_width("hello", 1), "…");
        assert_eq!(truncate_width("hello", 0), "");
        assert_eq!(truncate_width("", 0), "");
        // 漢 and 字 are 2 columns each: never split one.
        assert_eq!(truncate_width("漢字漢字", 4), "漢…");
        assert_eq!(truncate_width("漢字漢字", 5), "漢字…");
        // A combining accent stays with its letter.
        assert_eq!(truncate_width("e\u{301}e\u{301}e\u{301}", 2), "e\u{301}…");
    }

    fn nasty_text() -> impl Strategy<Value = String> {
        let c = prop_oneof![
            any::<char>(),
            (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap_or('x')),
            (0x7Fu32..0xA0).prop_map(|c| char::from_u32(c).unwrap_or('x')),
            prop::sample::select(vec![
                '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{1b}'
            ]),
            prop::sample::select(vec!['漢', '🦀', '\u{301}', '\u{FE0F}', '\u{200D}', '❤']),
        ];
        prop::collection::vec(c, 0..64).prop_map(|v| v.into_iter().collect())
    }

    fn forbidden(c: char) -> bool {
        c < ' ' || ('\u{7F}'..='\u{9F}').contains(&c) || is_bidi_control(c)
    }

    proptest! {
        #[test]
        fn inert_output_is_inert(s in nasty_text()) {
            let out = inert(&s);
            prop_assert!(!out.chars().any(|c| c != '\n' && forbidden(c)), "{:?}", out);
            prop_assert_eq!(inert(&out), out.clone());
            prop_assert_eq!(out.matches('\n').count(), s.matches('\n').count());
        }

        #[test]
        fn one_line_output_has_no_controls(s in nasty_text()) {
            let out = one_line(&s);
            prop_assert!(!out.chars().any(forbidden), "{:?}", out);
        }

        #[test]
        fn truncation_fits_and_is_a_prefix(s in nasty_text(), max in 0usize..40) {
            let s = one_line(&s);
            let out = truncate_width(&s, max);
            prop_assert!(width(&out) <= max, "{:?} is wider than {}", out, max);
            if width(&s) <= max {
                prop_assert_eq!(&out, &s);
            } else if max > 0 {
                prop_assert!(out.ends_with(ELLIPSIS));
                prop_assert!(s.starts_with(out.trim_end_matches(ELLIPSIS)));
            }
        }
    }
}
