//! `[notify] terminal`: a notice from the board becomes a desktop notification of the terminal
//! the TUI runs in (OSC 9, understood by iTerm2, kitty, WezTerm, Windows Terminal, foot; and
//! OSC 777, understood by urxvt, VTE terminals, Ghostty) and a bell. Inside tmux the sequences go
//! through tmux's passthrough (`ESC P tmux; … ESC \`), which needs `allow-passthrough on`
//! (`board up` sets it on its own window). Written between two draws, never while rendering.

use std::io::Write;

use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::NoticeView;

/// Longest text in a terminal notification, in columns.
const TEXT_COLS: usize = 200;

/// The bytes that announce `n` on a terminal: OSC 9 and OSC 777 (each wrapped for tmux when
/// `in_tmux`), then BEL. The agent's text has every control character removed (no `ESC`, `BEL`
/// or `ST` can end the sequence early), and `;` in the title is replaced so OSC 777's fields stay
/// apart.
pub fn sequence(n: &NoticeView, in_tmux: bool) -> Vec<u8> {
    let title = one_line(&n.title()).replace(';', ",");
    let body = truncate_width(&one_line(&body(n)), TEXT_COLS);
    let osc9 = format!("\x1b]9;{title}: {body}\x07");
    let osc777 = format!("\x1b]777;notify;{title};{body}\x07");
    let mut out = Vec::new();
    for osc in [osc9, osc777] {
        if in_tmux {
            // In a DCS passthrough every ESC of the wrapped sequence is doubled.
            out.extend_from_slice(b"\x1bPtmux;");
            out.extend_from_slice(osc.replace('\x1b', "\x1b\x1b").as_bytes());
            out.extend_from_slice(b"\x1b\\");
        } else {
            out.extend_from_slice(osc.as_bytes());
        }
    }
    out.push(0x07);
    out
}

/// Writes the notification of `n` to the terminal (stdout); a failed write is ignored (the
/// notice is also on the board's screen).
pub fn emit(n: &NoticeView) {
    let in_tmux = std::env::var_os("TMUX").is_some();
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&sequence(n, in_tmux));
    let _ = out.flush();
}

fn body(n: &NoticeView) -> String {
    match n.task {
        Some(t) => format!("#{t} {}", n.text),
        None => n.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::glossary::NoticeKind;

    fn notice(text: &str) -> NoticeView {
        NoticeView {
            kind: NoticeKind::Question,
            agent: Some("w".into()),
            task: None,
            text: text.into(),
            at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    #[test]
    fn outside_tmux_osc_9_and_777_then_the_bell() {
        let s = String::from_utf8(sequence(&notice("Which store?"), false)).unwrap();
        assert_eq!(
            s,
            "\x1b]9;board: w asks: Which store?\x07\x1b]777;notify;board: w asks;Which store?\x07\x07"
        );
    }

    #[test]
    fn inside_tmux_each_sequence_is_wrapped_with_its_escapes_doubled() {
        let s = String::from_utf8(sequence(&notice("Q"), true)).unwrap();
        assert!(
            s.starts_with("\x1bPtmux;\x1b\x1b]9;board: w asks: Q\x07\x1b\\"),
            "{s:?}"
        );
        assert!(s.contains("\x1bPtmux;\x1b\x1b]777;notify;"), "{s:?}");
        assert!(s.ends_with("\x1b\\\x07"));
    }

    #[test]
    fn an_agents_escape_sequences_cannot_end_the_notification_early() {
        let s = sequence(&notice("a\x07b\x1b]0;pwned\x1b\\c\u{9c}d"), false);
        // Exactly the three BELs of the two sequences and the bell; one ESC per sequence.
        assert_eq!(s.iter().filter(|b| **b == 0x07).count(), 3);
        assert_eq!(s.iter().filter(|b| **b == 0x1b).count(), 2);
        assert!(!String::from_utf8(s).unwrap().contains('\u{9c}'));
    }
}
