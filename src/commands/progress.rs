//! The progress bar: drawn on stderr when it is a terminal, nothing
//! otherwise; counts units of work (samples of a run, stages of the guest's
//! boots) with an estimate of the time left.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

pub struct Bar(ProgressBar);

impl Bar {
    /// A bar counting `unit`s (a plural: "samples").
    pub fn new(unit: &str) -> Bar {
        let bar = if std::io::stderr().is_terminal() && !super::output::quiet() {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            // Elapsed time, the units planned so far (adaptive cases add
            // to them as they go on), the estimate left, and what runs now.
            let template = format!(
                "{{elapsed:>4}} {{bar:20}} {{pos}}/{{len}} {unit}, ~{{eta}} left {{wide_msg}}"
            );
            if let Ok(style) = ProgressStyle::with_template(&template) {
                b.set_style(style);
            }
            b
        } else {
            ProgressBar::hidden()
        };
        Bar(bar)
    }

    /// Prints `text` as it is on stderr, the bar cleared meanwhile.
    pub fn say_raw(&self, text: &str) {
        self.0.suspend(|| eprint!("{text}"));
    }

    /// Redrawn twice a second, for units that take minutes (a boot).
    pub fn ticking(self) -> Bar {
        if !self.0.is_hidden() {
            self.0.enable_steady_tick(Duration::from_millis(500));
        }
        self
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
    fn note(&self, message: &str) {
        self.0.set_message(message.to_string());
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
