//! The 0-day robot's figure beside vmscale's: per case, one figure's
//! median with its order-statistic 95 % interval and the arithmetic mean
//! over the samples, which is what the robot reports
//! (`vm-scalability.throughput`, `will-it-scale.per_thread_ops`).

use super::cells::{flag, names};
use super::export::{Align, Block, Layout, Table};
use crate::model::Run;
use crate::stats::robust::median_ci;
use crate::stats::stopping::sig4;
use crate::stats::summary::{mean, median};

/// The table: `first` names the case column, `widths` its seven columns
/// (case, Thr, n, median, 95% CI, 0-day mean, flag).
pub fn table(run: &Run, figure: &str, title: String, first: &str, widths: &[usize; 7]) -> Block {
    let mut rows = Vec::new();
    for cs in &run.cases {
        let v: Vec<f64> = cs.values(figure).filter(|v| v.is_finite()).collect();
        if v.is_empty() {
            continue;
        }
        let ci = median_ci(&v)
            .map(|c| format!("[{}, {}]", sig4(c.lo), sig4(c.hi)))
            .unwrap_or_else(|| "-".into());
        rows.push(vec![
            cs.case.variant.clone(),
            cs.case.tasks.to_string(),
            v.len().to_string(),
            sig4(median(&v)),
            ci,
            sig4(mean(&v)),
            flag(cs),
        ]);
    }
    use Align::{Left as L, Right as R};
    Block::Table(Table {
        title,
        header: vec![names(&[
            first,
            "Thr",
            "n",
            "median",
            "95% CI",
            "0-day mean",
        ])],
        align: vec![L, R, R, R, R, R, L],
        rows,
        layout: Some(Layout::spaced(widths).sep(6, "")),
    })
}
