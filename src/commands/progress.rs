//! The progress bar: drawn on stderr when it is a terminal, nothing otherwise.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Bar(ProgressBar);

impl Default for Bar {
    fn default() -> Self {
        Bar::new()
    }
}

impl Bar {
    pub fn new() -> Bar {
        let bar = if std::io::stderr().is_terminal() && !super::output::quiet() {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            // Elapsed time, the samples planned so far (adaptive cases add
            // to it as they go on), the estimate left, and what runs now.
            let template = "{elapsed:>4} {bar:20} {pos}/{len} samples, ~{eta} left {wide_msg}";
            if let Ok(style) = ProgressStyle::with_template(template) {
                b.set_style(style);
            }
            b
        } else {
            ProgressBar::hidden()
        };
        Bar(bar)
    }
}

impl crate::runner::Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
        self.0.set_position(0);
    }
    fn step(&self, message: &str) {
        self.0.set_message(message.to_string());
        self.0.inc(1);
    }
    fn grow(&self, more: u64) {
        self.0.inc_length(more);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
    fn say(&self, line: &str) {
        self.0.suspend(|| eprintln!("vmscale: {line}"));
    }
}
