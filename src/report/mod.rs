//! Output: every table is rendered from a stored run, so `show` reprints
//! exactly what `run` printed.

pub mod compare;
pub mod compare_diff;
pub mod compare_layout;
pub mod export;
pub mod generic;
pub mod pft;
pub mod show;
pub mod sysinfo;

use crate::model::Run;

/// The text report of a run, chosen by its workload.
pub fn text(run: &Run) -> String {
    let body = match run.meta.workload.as_str() {
        "pft" => pft::text(run),
        _ => generic::text(run),
    };
    format!("{}{}", header(run), body)
}

/// The run's identity line, printed above every report.
pub fn header(run: &Run) -> String {
    let m = &run.meta;
    let mut s = format!(
        "run {}{}: {} ({}{})\n",
        m.id,
        m.label
            .as_deref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default(),
        m.workload,
        m.status.as_str(),
        m.note
            .as_deref()
            .map(|n| format!("; {n}"))
            .unwrap_or_default(),
    );
    if m.origin != "measured" {
        s.push_str(&format!("origin: {}\n", m.origin));
    }
    s
}

/// Median-sample selection shared by the table renderers: the measured
/// sample whose `figure` is the median, and the number of measured samples.
pub fn median_sample<'a>(
    case: &'a crate::model::CaseSamples,
    figure: &str,
) -> Option<(&'a crate::model::Sample, usize)> {
    let measured: Vec<_> = case.measured().collect();
    let values: Vec<f64> = measured
        .iter()
        .map(|s| s.data.figures.get(figure).copied().unwrap_or(f64::NAN))
        .collect();
    let i = crate::stats::summary::median_index(&values)?;
    Some((measured[i], measured.len()))
}
