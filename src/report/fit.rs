//! The USL fit as text and JSON, one function per format, so the exporter
//! trait can take them over unchanged.

use serde::Serialize;

use crate::stats::usl::{Estimate, Fit, Prediction};

/// A fit with what it was fitted to.
#[derive(Debug, Clone, Serialize)]
pub struct FitReport {
    /// "run 3 (pft)" or the pairs file's path.
    pub source: String,
    pub figure: String,
    pub unit: String,
    pub variant: Option<String>,
    pub fit: Fit,
    pub extrapolation: Vec<Prediction>,
    /// The fit's warnings and the extrapolation's.
    pub warnings: Vec<String>,
}

/// A number in about 5 significant digits, plain or scientific.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if v.fract() == 0.0 && a < 1e7 {
        format!("{v:.0}")
    } else if !(1e-3..1e7).contains(&a) {
        format!("{v:.4e}")
    } else {
        let decimals = (4 - a.log10().floor() as i32).clamp(0, 6) as usize;
        format!("{v:.decimals$}")
    }
}

fn row(name: &str, e: &Estimate) -> String {
    let (se, ci) = match (e.se, e.ci95) {
        (Some(se), Some((lo, hi))) => (num(se), format!("{} .. {}", num(lo), num(hi))),
        _ if e.at_bound => ("-".into(), "held at the bound 0".into()),
        _ => ("-".into(), "-".into()),
    };
    format!("  {name:<20} {:>12} {:>12}   {ci}\n", num(e.value), se)
}

pub fn text(r: &FitReport) -> String {
    let f = &r.fit;
    let mut out = format!(
        "USL fit of {} ({}){} from {}\n",
        r.figure,
        r.unit,
        r.variant
            .as_deref()
            .map(|v| format!(", variant {v}"))
            .unwrap_or_default(),
        r.source
    );
    out.push_str("X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)), sigma, kappa >= 0\n");
    out.push_str(&format!(
        "{} samples at {} distinct N ({} .. {})\n\n",
        f.points,
        f.distinct_n,
        num(f.min_n),
        num(f.max_n)
    ));
    out.push_str(&format!(
        "  {:<20} {:>12} {:>12}   95 % CI\n",
        "parameter", "estimate", "std. error"
    ));
    out.push_str(&row("sigma (contention)", &f.sigma));
    out.push_str(&row("kappa (coherency)", &f.kappa));
    out.push_str(&row("lambda (X at N=1)", &f.lambda));
    out.push('\n');
    match f.peak {
        Some((n, x)) => out.push_str(&format!(
            "peak: N* = sqrt((1 - sigma) / kappa) = {}, X(N*) = {} {}\n",
            num(n),
            num(x),
            r.unit
        )),
        None => out.push_str("peak: none (kappa = 0: X keeps rising toward lambda / sigma)\n"),
    }
    out.push_str(&format!(
        "residual standard error: {} {} on {} degrees of freedom\n",
        num(f.residual_se),
        r.unit,
        f.df
    ));
    if !r.extrapolation.is_empty() {
        out.push_str(&format!(
            "\n{:>8} {:>14} {:>29}\n",
            "N", "X(N)", "95 % CI of the curve"
        ));
        for p in &r.extrapolation {
            let ci = p
                .ci95
                .map(|(lo, hi)| format!("{} .. {}", num(lo), num(hi)))
                .unwrap_or_else(|| "-".into());
            out.push_str(&format!(
                "{:>8} {:>14} {:>29}{}\n",
                num(p.n),
                num(p.x),
                ci,
                if p.beyond_data {
                    "  (extrapolated)"
                } else {
                    ""
                }
            ));
        }
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

pub fn json(r: &FitReport) -> serde_json::Value {
    serde_json::to_value(r).unwrap_or_default()
}
