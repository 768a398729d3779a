//! The USL fit as one [`Report`] for every output format: the parameter
//! and extrapolation tables and the peak as blocks (text and Markdown),
//! one CSV record per parameter, the peak and each prediction, and the
//! [`FitReport`] itself as JSON.

use serde::Serialize;

use super::cells::names;
use super::export::{Align, Block, Records, Report, Table};
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

/// A number at full precision for CSV; empty when there is none.
fn full(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map(|v| format!("{v}"))
        .unwrap_or_default()
}

// The cells of both tables are padded to the fixed widths `fit` has always
// printed (the text exporter puts two spaces between columns, so each
// width here is the old field's less the difference), which keeps the text
// byte for byte; Markdown trims cells, so the padding does not show there.

fn parameter_row(name: &str, value: &str, se: &str, ci: &str) -> Vec<String> {
    vec![
        format!("  {name:<18}"),
        format!("{value:>13}"),
        format!("{se:>11}"),
        format!(" {ci}"),
    ]
}

fn parameter_cells(name: &str, e: &Estimate) -> Vec<String> {
    let (se, ci) = match (e.se, e.ci95) {
        (Some(se), Some((lo, hi))) => (num(se), format!("{} .. {}", num(lo), num(hi))),
        _ if e.at_bound => ("-".into(), "held at the bound 0".into()),
        _ => ("-".into(), "-".into()),
    };
    parameter_row(name, &num(e.value), &se, &ci)
}

fn parameters(f: &Fit) -> Table {
    Table {
        title: String::new(),
        layout: None,
        header: vec![parameter_row(
            "parameter",
            "estimate",
            "std. error",
            "95 % CI",
        )],
        align: vec![Align::Left, Align::Right, Align::Right, Align::Left],
        rows: vec![
            parameter_cells("sigma (contention)", &f.sigma),
            parameter_cells("kappa (coherency)", &f.kappa),
            parameter_cells("lambda (X at N=1)", &f.lambda),
        ],
    }
}

fn prediction_row(n: &str, x: &str, ci: &str, note: &str) -> Vec<String> {
    vec![
        format!("{n:>8}"),
        format!("{x:>13}"),
        format!("{ci:>28}"),
        note.to_string(),
    ]
}

fn extrapolation(ps: &[Prediction]) -> Table {
    let rows = ps
        .iter()
        .map(|p| {
            let ci = p
                .ci95
                .map(|(lo, hi)| format!("{} .. {}", num(lo), num(hi)))
                .unwrap_or_else(|| "-".into());
            let note = if p.beyond_data { "(extrapolated)" } else { "" };
            prediction_row(&num(p.n), &num(p.x), &ci, note)
        })
        .collect();
    Table {
        title: String::new(),
        layout: None,
        header: vec![prediction_row("N", "X(N)", "95 % CI of the curve", "")],
        align: vec![Align::Right, Align::Right, Align::Right, Align::Left],
        rows,
    }
}

/// The peak and the residual standard error.
fn summary(r: &FitReport) -> String {
    let f = &r.fit;
    let peak = match f.peak {
        Some((n, x)) => format!(
            "peak: N* = sqrt((1 - sigma) / kappa) = {}, X(N*) = {} {}\n",
            num(n),
            num(x),
            r.unit
        ),
        None => "peak: none (kappa = 0: X keeps rising toward lambda / sigma)\n".into(),
    };
    format!(
        "\n{peak}residual standard error: {} {} on {} degrees of freedom\n{}",
        num(f.residual_se),
        r.unit,
        f.df,
        if r.extrapolation.is_empty() { "" } else { "\n" }
    )
}

/// One record per parameter, the peak (when there is one) and each
/// prediction, numbers at full precision.
fn records(r: &FitReport) -> Records {
    let f = &r.fit;
    let mut rows = Vec::new();
    for (name, e) in [
        ("sigma", &f.sigma),
        ("kappa", &f.kappa),
        ("lambda", &f.lambda),
    ] {
        let (lo, hi) = e.ci95.unzip();
        rows.push(vec![
            "parameter".into(),
            name.into(),
            String::new(),
            full(Some(e.value)),
            full(e.se),
            full(lo),
            full(hi),
            if e.at_bound {
                "held at the bound 0"
            } else {
                ""
            }
            .into(),
        ]);
    }
    if let Some((n, x)) = f.peak {
        let cells = [
            "peak",
            "X(N*)",
            &full(Some(n)),
            &full(Some(x)),
            "",
            "",
            "",
            "",
        ];
        rows.push(names(&cells));
    }
    for p in &r.extrapolation {
        let (lo, hi) = p.ci95.unzip();
        rows.push(vec![
            "prediction".into(),
            "X(N)".into(),
            full(Some(p.n)),
            full(Some(p.x)),
            String::new(),
            full(lo),
            full(hi),
            if p.beyond_data { "extrapolated" } else { "" }.into(),
        ]);
    }
    Records {
        columns: names(&[
            "kind",
            "name",
            "n",
            "value",
            "stderr",
            "ci95_low",
            "ci95_high",
            "note",
        ]),
        rows,
    }
}

/// The fit in every format's shape; the text exporter writes it as `fit`
/// has always printed it.
pub fn report(r: &FitReport) -> Report {
    let f = &r.fit;
    let title = format!(
        "USL fit of {} ({}){} from {}",
        r.figure,
        r.unit,
        r.variant
            .as_deref()
            .map(|v| format!(", variant {v}"))
            .unwrap_or_default(),
        r.source
    );
    let model = format!(
        "X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)), sigma, kappa >= 0\n\
         {} samples at {} distinct N ({} .. {})\n\n",
        f.points,
        f.distinct_n,
        num(f.min_n),
        num(f.max_n)
    );
    let mut blocks = vec![
        Block::Title(title),
        Block::Paragraph(model),
        Block::Table(parameters(f)),
        Block::Paragraph(summary(r)),
    ];
    if !r.extrapolation.is_empty() {
        blocks.push(Block::Table(extrapolation(&r.extrapolation)));
    }
    if !r.warnings.is_empty() {
        blocks.push(Block::Paragraph(super::warnings::paragraph(&r.warnings)));
    }
    Report {
        text: None,
        blocks,
        records: records(r),
        data: serde_json::to_value(r).unwrap_or_default(),
    }
}
