//! Output: every table is rendered from a stored run, so `show` reprints
//! exactly what `run` printed. Each report is a list of typed blocks
//! (`export::Block`) that every output format renders.

pub mod atomic;
pub mod bisect;
pub mod c2c;
pub mod cells;
pub mod centre;
pub mod churn;
pub mod cmd;
pub mod colour;
pub mod compare_layout;
pub mod export;
pub mod fit;
pub mod fork;
pub mod generic;
pub mod groups;
pub mod history;
pub mod html;
pub mod imported;
pub mod knobs;
pub mod latency;
pub mod list;
pub mod lockfan;
pub mod meminfo;
pub mod mmap_lock;
pub mod mthp;
pub mod numa;
pub mod pcp;
pub mod pft;
pub mod probes;
pub mod profile;
pub mod robot_mean;
pub mod series;
pub mod show;
pub mod stressng;
pub mod sysinfo;
pub mod termplot;
pub mod thp;
pub mod ticks;
pub mod verdict;
pub mod vms;
pub mod warnings;
pub mod wis;

use crate::model::Run;
use crate::workload::Report;
use export::Block;

/// The text report of a run: its blocks as the text exporter lays them
/// out, shaded when stdout is a colour terminal.
pub fn text(run: &Run) -> String {
    export::text::blocks(&blocks(run, cells::colour_stdout()))
}

/// The report of a run as blocks, chosen by its workload's `Spec::report`:
/// the header, the workload's own tables (one set per knob combination,
/// unless the report lays those side by side itself), and the centre
/// section. `colour` shades the cells of tables that have a colour scale
/// (for a terminal only).
pub fn blocks(run: &Run, colour: bool) -> Vec<Block> {
    let spec = crate::workload::find(&run.meta.workload);
    let own_ab = spec.is_some_and(|s| s.report.owns_knob_blocks());
    let mut out = header_blocks(run);
    match knobs::split(run).filter(|_| !own_ab) {
        Some(parts) => {
            for (label, sub) in &parts {
                out.push(Block::Title(format!("[{label}]")));
                out.extend(body(sub, colour));
                out.extend(mthp::blocks(sub));
                out.extend(meminfo::blocks(sub));
                out.extend(centre::blocks(sub));
            }
        }
        None => {
            out.extend(body(run, colour));
            out.extend(mthp::blocks(run));
            out.extend(meminfo::blocks(run));
            out.extend(centre::blocks(run));
        }
    }
    out
}

/// The workload's own tables.
fn body(run: &Run, colour: bool) -> Vec<Block> {
    if imported::handles(run) {
        return imported::blocks(run);
    }
    match crate::workload::find(&run.meta.workload).map(|s| s.report) {
        Some(Report::Pft) => pft::blocks(run),
        Some(Report::Numa) => numa::blocks(run),
        Some(Report::Fork) => fork::blocks(run),
        Some(Report::Churn) => churn::blocks(run),
        Some(Report::Cmd) => cmd::blocks(run),
        Some(Report::Colour) => colour::blocks(run),
        Some(Report::C2c) => c2c::blocks(run, colour),
        Some(Report::Atomic) => atomic::blocks(run),
        Some(Report::Lockfan) => lockfan::blocks(run),
        Some(Report::Latency) => latency::blocks(run),
        Some(Report::Wis) => wis::blocks(run),
        Some(Report::MmapLock) => mmap_lock::blocks(run),
        Some(Report::Thp) => thp::blocks(run),
        Some(Report::Vms) => vms::blocks(run),
        Some(Report::StressNg) => stressng::blocks(run),
        Some(Report::Generic) | None => generic::blocks(run),
    }
}

/// The run's identity line, printed above every report.
pub fn header(run: &Run) -> String {
    export::text::blocks(&header_blocks(run))
}

/// The identity line as a title, the origin and knobs under it.
fn header_blocks(run: &Run) -> Vec<Block> {
    let m = &run.meta;
    let mut out = vec![Block::Title(format!(
        "run {}{}: {} ({}{})",
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
    ))];
    let mut s = String::new();
    if m.origin != "measured" {
        s.push_str(&format!("origin: {}\n", m.origin));
    }
    s.push_str(&knobs::summary(run));
    if !s.is_empty() {
        out.push(Block::Paragraph(s));
    }
    out
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
