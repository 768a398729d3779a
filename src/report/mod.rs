//! Output: every table is rendered from a stored run, so `show` reprints
//! exactly what `run` printed.

pub mod atomic;
pub mod c2c;
pub mod cells;
pub mod centre;
pub mod churn;
pub mod cmd;
pub mod colour;
pub mod compare;
pub mod compare_diff;
pub mod compare_layout;
pub mod export;
pub mod fit;
pub mod fork;
pub mod generic;
pub mod html;
pub mod imported;
pub mod knobs;
pub mod latency;
pub mod lockfan;
pub mod mmap_lock;
pub mod numa;
pub mod pcp;
pub mod pft;
pub mod profile;
pub mod series;
pub mod show;
pub mod sysinfo;
pub mod termplot;
pub mod wis;

use crate::model::Run;
use crate::workload::Report;

/// The text report of a run, chosen by its workload's `Spec::report`.
pub fn text(run: &Run) -> String {
    let spec = crate::workload::find(&run.meta.workload);
    // Most reports print one block per knob combination; some (colour) set
    // their combinations side by side themselves.
    let own_ab = spec.is_some_and(|s| s.report.owns_knob_blocks());
    if let Some(blocks) = knobs::split(run).filter(|_| !own_ab) {
        let mut out = header(run);
        for (label, sub) in &blocks {
            let t = text(sub);
            out.push_str(&format!(
                "\n[{label}]\n{}",
                t.strip_prefix(&header(sub)).unwrap_or(&t)
            ));
        }
        return out;
    }
    let body = if imported::handles(run) {
        imported::text(run)
    } else {
        match spec.map(|s| s.report) {
            Some(Report::Pft) => pft::text(run),
            Some(Report::Numa) => numa::text(run),
            Some(Report::Fork) => fork::text(run),
            Some(Report::Churn) => churn::text(run),
            Some(Report::Cmd) => cmd::text(run),
            Some(Report::Colour) => colour::text(run),
            Some(Report::C2c) => c2c::text(run),
            Some(Report::Atomic) => atomic::text(run),
            Some(Report::Lockfan) => lockfan::text(run),
            Some(Report::Latency) => latency::text(run),
            Some(Report::Wis) => wis::text(run),
            Some(Report::MmapLock) => mmap_lock::text(run),
            None => generic::text(run),
        }
    };
    format!("{}{}{}", header(run), body, centre::section(run))
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
    s.push_str(&knobs::summary(run));
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
