//! A plain table for any workload: per case, the median and spread of each
//! declared figure.

use crate::model::Run;
use crate::stats::summary::summarise;

pub fn text(run: &Run) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<18} {:>5} {:<14} {:>3} {:>14} {:>8}\n",
        "case", "tasks", "figure", "n", "median", "cv%"
    ));
    for c in &run.cases {
        for f in &run.meta.figures {
            let values: Vec<f64> = c
                .measured()
                .filter_map(|s| s.data.figures.get(&f.name).copied())
                .collect();
            if let Some(s) = summarise(&values, f.rate) {
                out.push_str(&format!(
                    "{:<18} {:>5} {:<14} {:>3} {:>14.3} {:>8.2}{}\n",
                    c.case.variant,
                    c.case.tasks,
                    f.name,
                    s.n,
                    s.median,
                    s.coeff_var,
                    if c.measured().any(|s| s.flagged) {
                        " *"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    if run.cases.iter().any(|c| c.measured().any(|s| s.flagged)) {
        out.push_str("  * a sample of this case was flagged as noisy\n");
    }
    out
}
