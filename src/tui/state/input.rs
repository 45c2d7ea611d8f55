//! A one-line text field with a cursor: the filter and every field of a form.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthChar;

use crate::proto::sanitize::one_line;

/// A one-line text field with a cursor (a byte index on a character boundary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Input {
    text: String,
    cursor: usize,
}

impl Input {
    /// A field holding `text`, cursor at the end.
    pub fn new(text: &str) -> Input {
        Input {
            text: text.to_string(),
            cursor: text.len(),
        }
    }

    /// The text as typed (raw; draw it through [`Input::window`]).
    pub fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    pub(crate) fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// Where the cursor lands moving one visible character left: zero-width characters
    /// (combining marks) travel with the character before them.
    pub(super) fn prev(&self) -> usize {
        let mut at = self.cursor;
        for (i, c) in self.text[..self.cursor].char_indices().rev() {
            at = i;
            if c.width().unwrap_or(0) > 0 {
                break;
            }
        }
        at
    }

    pub(super) fn next(&self) -> usize {
        let mut chars = self.text[self.cursor..].char_indices();
        let Some((_, first)) = chars.next() else {
            return self.cursor;
        };
        let mut at = self.cursor + first.len_utf8();
        for (i, c) in chars {
            if c.width().unwrap_or(0) > 0 {
                break;
            }
            at = self.cursor + i + c.len_utf8();
        }
        at
    }

    /// Applies an editing key; returns false when the key is not an editing key.
    pub(crate) fn edit(&mut self, key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.text.len(),
            KeyCode::Char('u') if ctrl => {
                self.text.replace_range(..self.cursor, "");
                self.cursor = 0;
            }
            KeyCode::Char('k') if ctrl => self.text.truncate(self.cursor),
            KeyCode::Char('w') if ctrl => {
                let head = &self.text[..self.cursor];
                let start = head.trim_end().rfind(' ').map(|i| i + 1).unwrap_or(0);
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Char(c) if !ctrl && !key.modifiers.contains(KeyModifiers::ALT) => {
                self.insert(c)
            }
            KeyCode::Backspace => {
                let p = self.prev();
                self.text.replace_range(p..self.cursor, "");
                self.cursor = p;
            }
            KeyCode::Delete => {
                let n = self.next();
                self.text.replace_range(self.cursor..n, "");
            }
            KeyCode::Left => self.cursor = self.prev(),
            KeyCode::Right => self.cursor = self.next(),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.text.len(),
            _ => return false,
        }
        true
    }

    /// What to draw in a field `width` columns wide: the inert text around the cursor, and the
    /// cursor's column within it. Line breaks show as `↵`, controls as their inert pictures.
    pub fn window(&self, width: usize) -> (String, usize) {
        let width = width.max(1);
        let shown: Vec<(usize, char, usize)> = self
            .text
            .char_indices()
            .map(|(i, c)| {
                let s = shown_char(c);
                (i, s, s.width().unwrap_or(0))
            })
            .collect();
        let cur = shown
            .iter()
            .position(|(i, _, _)| *i >= self.cursor)
            .unwrap_or(shown.len());
        // Walk back from the cursor until the text before it fills the field (minus the cursor).
        let mut start = cur;
        let mut used = 0;
        while start > 0 && used + shown[start - 1].2 < width {
            used += shown[start - 1].2;
            start -= 1;
        }
        let mut out = String::new();
        let mut cols = 0;
        let mut cursor_col = 0;
        for (n, (_, c, w)) in shown.iter().enumerate().skip(start) {
            if n == cur {
                cursor_col = cols;
            }
            if cols + w > width {
                break;
            }
            out.push(*c);
            cols += w;
        }
        if cur >= shown.len() {
            cursor_col = cols;
        }
        (out, cursor_col.min(width - 1))
    }
}

fn shown_char(c: char) -> char {
    if c == '\n' {
        return '↵';
    }
    let mut b = [0u8; 4];
    one_line(c.encode_utf8(&mut b))
        .chars()
        .next()
        .unwrap_or(' ')
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use super::Input;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn input_moves_over_combining_marks_and_scrolls_wide_text() {
        let mut i = Input::new("e\u{301}漢");
        i.edit(&key(KeyCode::Left));
        i.edit(&key(KeyCode::Left));
        assert_eq!(i.cursor, 0);
        i.edit(&key(KeyCode::Right));
        assert_eq!(i.cursor, "e\u{301}".len());
        i.edit(&key(KeyCode::End));
        i.edit(&key(KeyCode::Backspace));
        i.edit(&key(KeyCode::Backspace));
        assert_eq!(i.text(), "");
        let i = Input::new(&format!("\x1b[31m{}", "漢".repeat(50)));
        let (shown, col) = i.window(20);
        assert!(!shown.contains('\x1b'));
        assert!(unicode_width::UnicodeWidthStr::width(shown.as_str()) <= 20);
        assert!(col < 20);
        let (shown, col) = Input::new("\x1b]0;x\x07").window(20);
        assert_eq!((shown.as_str(), col), ("␛]0;x␇", 6));
    }
}
