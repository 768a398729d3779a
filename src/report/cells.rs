//! Small helpers the report tables share: a figure's summary over a
//! case's measured samples, header cells, the noisy-sample flag, and value
//! shading for terminals.

use crate::model::{CaseSamples, Run};
use crate::stats::summary::{Summary, summarise};

/// The summary of `figure` over the measured samples of `case`.
pub fn summary(case: &CaseSamples, figure: &str, rate: bool) -> Option<Summary> {
    let values: Vec<f64> = case.values(figure).filter(|v| v.is_finite()).collect();
    summarise(&values, rate)
}

/// "medians of 5 samples", or "medians of 3..5 samples per case" when
/// adaptive stopping gave the cases different counts.
pub fn medians_of(run: &Run) -> String {
    let counts: Vec<usize> = run.cases.iter().map(|c| c.measured().count()).collect();
    let lo = counts.iter().copied().min().unwrap_or(0);
    let hi = counts.iter().copied().max().unwrap_or(0);
    if lo == hi {
        format!("medians of {lo} sample{}", if lo == 1 { "" } else { "s" })
    } else {
        format!("medians of {lo}..{hi} samples per case")
    }
}

/// The median of `figure` over the measured samples of `case`.
pub fn median(case: &CaseSamples, figure: &str) -> Option<f64> {
    summary(case, figure, false).map(|s| s.median)
}

/// The largest value `figure` took in any measured sample of the run.
pub fn max_over_run(run: &Run, figure: &str) -> f64 {
    run.cases
        .iter()
        .flat_map(|c| c.values(figure))
        .fold(0.0, f64::max)
}

/// Whether tables on stdout may carry ANSI colours.
pub fn colour_stdout() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Wraps `text` in a 256-colour background from green (lo) to red (hi).
pub fn shade(text: &str, value: f64, lo: f64, hi: f64) -> String {
    const RAMP: [u8; 6] = [46, 118, 190, 226, 208, 196];
    let t = if hi > lo {
        ((value - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let i = (t * (RAMP.len() - 1) as f64).round() as usize;
    format!("\x1b[30;48;5;{}m{text}\x1b[0m", RAMP[i])
}

/// The note under a table whose rows carry " *".
pub const FLAGGED_CASE: &str = "  * a sample of this case was flagged as noisy\n";
pub const FLAGGED_ROW: &str = "  * a sample of this row was flagged as noisy\n";

/// " *" for a case with a sample flagged as noisy, else "".
pub fn flag(c: &crate::model::CaseSamples) -> String {
    if c.measured().any(|s| s.flagged) {
        " *".into()
    } else {
        String::new()
    }
}

/// Whether any measured sample of the run was flagged as noisy.
pub fn any_flagged(run: &Run) -> bool {
    run.cases.iter().any(|c| c.measured().any(|s| s.flagged))
}

/// Header cells from their names.
pub fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shading_spans_the_ramp() {
        assert!(shade("1", 0.0, 0.0, 10.0).contains("5;46m"));
        assert!(shade("1", 10.0, 0.0, 10.0).contains("5;196m"));
        assert!(shade("1", 5.0, 5.0, 5.0).contains("5;46m"));
    }
}
