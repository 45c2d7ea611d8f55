//! Render benchmark of the TUI: one frame of a board with 10 000 tasks and 100 agents.
//!
//! Run with `cargo bench --bench tui_render`. A plain `harness = false` program: it draws 200
//! frames per case and prints the median, p95 and worst frame time. Target: under 16 ms a frame.
//!
//! Cases, at 80×24, 160×48 and 240×70:
//! - `steady`: the same board redrawn (what a countdown tick costs);
//! - `scroll`: the selection jumps a page every frame, so most cells change;
//! - `crossterm`: `scroll` through ratatui's crossterm backend into memory, including the escape
//!   sequences a real terminal would receive.
//!
//! It also times taking in a snapshot of that size (`on_snapshot`: sanitizing, grouping,
//! sorting), which happens once per refresh rather than once per frame.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use board::proto;
use board::tui::state::app::App;
use board::tui::{state, view};

// The sample boards are test data, not part of the library: the bench compiles the same file the
// TUI's unit tests use (its `crate::proto` and `super::super::state` resolve to the imports
// above).
#[path = "../src/tui/update"]
mod update {
    #[allow(dead_code)]
    pub mod fixture;
}
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::{Backend, CrosstermBackend, TestBackend};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use update::fixture;

const FRAMES: usize = 200;

/// A terminal that counts the bytes it is sent and drops them.
struct Sink(usize);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
const WARMUP: usize = 20;

fn stats(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let pick = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name:<28} median {:>7.3} ms   p95 {:>7.3} ms   max {:>7.3} ms   ({} samples)",
        ms(pick(0.5)),
        ms(pick(0.95)),
        ms(*times.last().unwrap_or(&Duration::ZERO)),
        times.len()
    );
}

fn frames<B: Backend>(term: &mut Terminal<B>, app: &mut App, scroll: bool) -> Vec<Duration> {
    let page = KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE);
    let top = KeyEvent::new(KeyCode::Char('g'), KeyModifiers::NONE);
    let mut times = Vec::with_capacity(FRAMES);
    for i in 0..WARMUP + FRAMES {
        if scroll {
            // A page down each frame; back to the top now and then.
            let key = if i % 50 == 0 { top } else { page };
            app.on_key(key);
        }
        let t = Instant::now();
        if term.draw(|f| view::draw(f, app)).is_err() {
            eprintln!("drawing failed");
            std::process::exit(1);
        }
        if i >= WARMUP {
            times.push(t.elapsed());
        }
    }
    times
}

fn main() {
    let snap = fixture::large_snapshot(10_000, 100);
    let mut ingest = Vec::new();
    let mut app = fixture::app_with(snap.clone(), true);
    for _ in 0..20 {
        let s = snap.clone();
        let t = Instant::now();
        let _ = app.on_snapshot(s, fixture::FETCHED_MS);
        ingest.push(t.elapsed());
    }
    println!(
        "board of {} tasks, {} agents, {} events",
        snap.tasks.len(),
        snap.agents.len(),
        snap.events.len()
    );
    stats("on_snapshot (per refresh)", ingest);
    for (w, h) in [(80u16, 24u16), (160, 48), (240, 70)] {
        let mut term = match Terminal::new(TestBackend::new(w, h)) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("test backend: {e}");
                std::process::exit(1);
            }
        };
        let mut a = app.clone();
        stats(&format!("{w}x{h} steady"), frames(&mut term, &mut a, false));
        stats(&format!("{w}x{h} scroll"), frames(&mut term, &mut a, true));
        let backend = CrosstermBackend::new(Sink(0));
        let options = TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, w, h)),
        };
        let mut term = match Terminal::with_options(backend, options) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("crossterm backend: {e}");
                std::process::exit(1);
            }
        };
        stats(
            &format!("{w}x{h} crossterm"),
            frames(&mut term, &mut a, true),
        );
    }
}
