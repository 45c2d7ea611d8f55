//! Reading one line of the wire without holding more than the limit ([`super::MAX_LINE`]) of it
//! in memory: the board's socket server and `board mcp` read with [`read_line_async`],
//! `board json` with [`read_line`]. Both feed the same [`LineBuf`], so the two readers cannot
//! disagree on where a line ends or when it is too long.

use std::io::{self, BufRead};

use tokio::io::AsyncBufReadExt;

/// One line read with [`read_line`] or [`read_line_async`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line: newline (and a `\r` before it) stripped; the last line may lack one.
    Text(Vec<u8>),
    /// A line longer than the limit: its bytes were read and dropped up to the newline. Holds
    /// its length in bytes.
    TooLong(usize),
    /// End of input.
    Eof,
}

/// A line being read chunk by chunk (as `fill_buf` hands them out).
#[derive(Debug, Default)]
pub struct LineBuf {
    buf: Vec<u8>,
    size: usize,
}

impl LineBuf {
    /// Takes in `chunk` (empty: end of input) for a line of at most `max` bytes. Returns how many
    /// bytes of `chunk` to consume, and the line once it is complete.
    pub fn feed(&mut self, chunk: &[u8], max: usize) -> (usize, Option<Line>) {
        if chunk.is_empty() {
            let line = match self.size {
                0 => Line::Eof,
                s if s > max => Line::TooLong(s),
                _ => Line::Text(strip_cr(std::mem::take(&mut self.buf))),
            };
            return (0, Some(line));
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if self.size + take <= max {
            self.buf.extend_from_slice(&chunk[..take]);
        } else if !self.buf.is_empty() {
            self.buf = Vec::new();
        }
        self.size += take;
        if !done {
            return (take, None);
        }
        let line = if self.size > max {
            Line::TooLong(self.size)
        } else {
            Line::Text(strip_cr(std::mem::take(&mut self.buf)))
        };
        (take + 1, Some(line))
    }
}

fn strip_cr(mut buf: Vec<u8>) -> Vec<u8> {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    buf
}

/// Reads one line from `r`, at most `max` bytes of it held. Errors: only I/O errors of `r`.
pub fn read_line<R: BufRead>(r: &mut R, max: usize) -> io::Result<Line> {
    let mut line = LineBuf::default();
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (used, done) = line.feed(chunk, max);
        r.consume(used);
        if let Some(l) = done {
            return Ok(l);
        }
    }
}

/// As [`read_line`], on an async reader.
pub async fn read_line_async<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    max: usize,
) -> io::Result<Line> {
    let mut line = LineBuf::default();
    loop {
        let chunk = r.fill_buf().await?;
        let (used, done) = line.feed(chunk, max);
        r.consume(used);
        if let Some(l) = done {
            return Ok(l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize, cap: usize) -> Vec<Line> {
        let mut r = io::BufReader::with_capacity(cap, input);
        let mut out = Vec::new();
        loop {
            let l = read_line(&mut r, max).unwrap();
            if l == Line::Eof {
                return out;
            }
            out.push(l);
        }
    }

    #[test]
    fn long_lines_are_dropped_and_reading_goes_on() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nok\r\n\nlast");
        assert_eq!(
            lines(&input, 50, 16),
            vec![
                Line::TooLong(100),
                Line::Text(b"ok".to_vec()),
                Line::Text(Vec::new()),
                Line::Text(b"last".to_vec())
            ]
        );
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_kept() {
        let mut input = vec![b'y'; 50];
        input.push(b'\n');
        assert_eq!(lines(&input, 50, 7), vec![Line::Text(vec![b'y'; 50])]);
        let unterminated = vec![b'z'; 51];
        assert_eq!(lines(&unterminated, 50, 7), vec![Line::TooLong(51)]);
    }

    #[tokio::test]
    async fn long_lines_are_skipped_and_the_next_line_is_read() {
        let mut input = vec![b'x'; 100];
        input.push(b'\n');
        input.extend_from_slice(b"ok\n");
        let mut r = tokio::io::BufReader::with_capacity(16, &input[..]);
        assert_eq!(
            read_line_async(&mut r, 50).await.unwrap(),
            Line::TooLong(100)
        );
        assert_eq!(
            read_line_async(&mut r, 50).await.unwrap(),
            Line::Text(b"ok".to_vec())
        );
        assert_eq!(read_line_async(&mut r, 50).await.unwrap(), Line::Eof);
    }
}
