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

/// The text report of a run, chosen by its workload.
pub fn text(run: &Run) -> String {
    // Most reports print one block per knob combination; colour sets its
    // combinations side by side itself.
    let own_ab = run.meta.workload == "colour";
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
    let body = match run.meta.workload.as_str() {
        _ if imported::handles(run) => imported::text(run),
        "pft" => pft::text(run),
        "numa01" | "numa01-threadlocal" | "numa02" | "numa02-smt" => numa::text(run),
        "fork" => fork::text(run),
        "churn" => churn::text(run),
        "cmd" => cmd::text(run),
        "colour" => colour::text(run),
        "c2c" => c2c::text(run),
        "atomic" => atomic::text(run),
        "lockfan" => lockfan::text(run),
        "latency" => latency::text(run),
        "wis" => wis::text(run),
        "mmap-lock" => mmap_lock::text(run),
        _ => generic::text(run),
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
