//! The progress bar of `append`: bytes read of the total, rows and rows/s, on stderr when it
//! is a terminal; nothing when piped (or with `--json`).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Bar, bytes read of the total, then rows, rows/s and the current file.
const TEMPLATE: &str = "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg}";

/// A progress bar, hidden when stderr is not a terminal.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: ProgressBar,
    started: Instant,
}

impl Progress {
    /// A bar over `total_bytes`; hidden unless `wanted` and stderr is a terminal.
    pub(crate) fn new(total_bytes: u64, wanted: bool) -> Self {
        let bar = if wanted && std::io::stderr().is_terminal() {
            let bar =
                ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        } else {
            ProgressBar::hidden()
        };
        Self {
            bar,
            started: Instant::now(),
        }
    }

    /// Shows `rows` written and `bytes` read so far, from `file`.
    pub(crate) fn update(&self, rows: u64, bytes: u64, file: &str) {
        if self.bar.is_hidden() {
            return;
        }
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        self.bar.set_position(bytes);
        self.bar.set_message(format!(
            "{rows} rows, {:.0} rows/s  {file}",
            rows as f64 / secs
        ));
    }

    /// Removes the bar (success or failure: the caller prints the outcome).
    pub(crate) fn clear(&self) {
        self.bar.finish_and_clear();
    }

    /// Time since the bar was made.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}
