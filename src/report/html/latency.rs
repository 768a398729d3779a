//! Latency against working set: ns per dependent load (mean ± 95 % CI over
//! the samples) on a log2 axis of working-set bytes, one line per page kind
//! (base, thp), with a vertical marker at every data or unified cache size
//! the run's machine snapshot recorded.

use plotters::prelude::*;

use super::svg::{self, LABELS, axis, colour, e, escape, span};
use crate::machine::Snapshot;
use crate::model::Run;
use crate::report::cells;
use crate::units;
use crate::workload::latency::parse_variant;

/// (bytes, mean ns, ci95 half-width) for one page kind, by size.
type Line = (String, Vec<(f64, f64, f64)>);

fn lines(run: &Run) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for c in &run.cases {
        let Some((kind, size)) = parse_variant(&c.case.variant) else {
            continue;
        };
        let Some(s) = cells::summary(c, "ns/load", false) else {
            continue;
        };
        let ci = if s.ci95.is_finite() { s.ci95 } else { 0.0 };
        let p = (size as f64, s.mean, ci);
        match out.iter_mut().find(|l| l.0 == kind) {
            Some(l) => l.1.push(p),
            None => out.push((kind.to_string(), vec![p])),
        }
    }
    for l in &mut out {
        l.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// Data and unified cache levels as (name, bytes), smallest first.
pub fn cache_sizes(m: &Snapshot) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = m
        .cache_levels()
        .into_iter()
        .map(|l| l.first)
        .filter(|l| l.kind != "Instruction")
        .filter_map(|l| {
            let name = format!("L{}{}", l.level, if l.kind == "Data" { "d" } else { "" });
            Some((name, l.size_bytes?))
        })
        .collect();
    v.sort_by_key(|x| x.1);
    v
}

pub fn plots(run: &Run) -> Vec<(String, String)> {
    let all = lines(run);
    if all.iter().all(|l| l.1.is_empty()) {
        return Vec::new();
    }
    let caches = serde_json::from_value::<Snapshot>(run.meta.machine.clone())
        .map(|m| cache_sizes(&m))
        .unwrap_or_default();
    let (svg, shown) = curve(&all, &caches);
    let outside: Vec<String> = caches
        .iter()
        .filter(|c| !shown.contains(&c.0))
        .map(|c| format!("{} {}", c.0, units::size(c.1)))
        .collect();
    let n = run.cases.first().map(|c| c.measured().count()).unwrap_or(0);
    let mut caption = format!(
        "ns per dependent load against working set (log2 axis): mean ± 95 % CI of {n} \
         sample{} per point, one line per page kind; dashed lines mark the cache sizes \
         of the run's machine",
        if n == 1 { "" } else { "s" }
    );
    if caches.is_empty() {
        caption.push_str(" (none recorded)");
    } else if !outside.is_empty() {
        caption.push_str(&format!(
            "; outside the sizes measured: {}",
            outside.join(", ")
        ));
    }
    vec![(caption, svg)]
}

/// The chart, and the names of the cache markers drawn on it.
fn curve(all: &[Line], caches: &[(String, u64)]) -> (String, Vec<String>) {
    let pts = || all.iter().flat_map(|l| l.1.iter());
    let xmin = pts().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let xmax = pts().map(|p| p.0).fold(0.0, f64::max);
    let top = pts().map(|p| p.1 + p.2).fold(0.0, f64::max);
    // Half a doubling of room either side; markers only inside the data.
    let (x0, x1) = (xmin / 2f64.sqrt(), xmax * 2f64.sqrt());
    let inside: Vec<&(String, u64)> = caches
        .iter()
        .filter(|c| (c.1 as f64) >= xmin && (c.1 as f64) <= xmax)
        .collect();
    let shown: Vec<String> = inside.iter().map(|c| c.0.clone()).collect();
    let mut markers: Vec<(i32, i32, i32, String)> = Vec::new();
    let doublings = (xmax / xmin).log2().round().max(1.0) as usize;
    let yr = span(0.0, top * 1.05);
    let yt = axis(&yr, LABELS);
    let mut svg = svg::render(|root| {
        let x = (x0..x1).log_scale().base(2.0);
        let mut chart = svg::chart(root, "latency against working set", 60, x, yr.clone())?;
        chart
            .configure_mesh()
            .x_desc("working set (bytes, log2)")
            .x_labels(doublings.clamp(2, 16) + 1)
            .x_label_formatter(&|v| units::size(v.round() as u64))
            .light_line_style(WHITE)
            .y_desc("ns per load")
            .y_labels(LABELS)
            .y_label_formatter(&|v| yt.label(*v))
            .draw()
            .map_err(e)?;
        for (i, (kind, pts)) in all.iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(pts.iter().map(|&(x, m, _)| (x, m)), c))
                .map_err(e)?
                .label(format!("{kind} pages"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c));
            chart
                .draw_series(
                    pts.iter()
                        // A latency is never negative: a wide CI stops at 0.
                        .map(|&(x, m, ci)| {
                            ErrorBar::new_vertical(x, (m - ci).max(0.0), m, m + ci, c, 6)
                        }),
                )
                .map_err(e)?;
            chart
                .draw_series(
                    pts.iter()
                        .map(|&(x, m, _)| Circle::new((x, m), 3, c.filled())),
                )
                .map_err(e)?;
        }
        for (name, size) in &inside {
            let (x, y_top) = chart.backend_coord(&(*size as f64, top * 1.05));
            let (_, y_bottom) = chart.backend_coord(&(*size as f64, 0.0));
            markers.push((x, y_top, y_bottom, format!("{name} {}", units::size(*size))));
        }
        svg::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    });
    // Drawn by hand so each marker is one element with its label.
    if let Some(end) = svg.rfind("</svg>") {
        let mut g = String::new();
        for (x, y0, y1, label) in &markers {
            g.push_str(&format!(
                "<g class=\"cache-marker\"><line x1=\"{x}\" y1=\"{y0}\" x2=\"{x}\" y2=\"{y1}\" \
                 stroke=\"#666666\" stroke-dasharray=\"5,4\"/><text x=\"{}\" y=\"{}\" \
                 font-family=\"sans-serif\" font-size=\"11\" fill=\"#444444\">{}</text></g>\n",
                x + 3,
                y0 + 12,
                escape(label)
            ));
        }
        svg.insert_str(end, &g);
    }
    (svg, shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_only_inside_the_measured_sizes() {
        let all = vec![(
            "base".to_string(),
            vec![(4096.0, 1.0, 0.1), (65536.0, 2.0, 0.2)],
        )];
        let caches = vec![
            ("L1d".to_string(), 32768),
            ("L2".to_string(), 524288),
            ("L3".to_string(), 4096),
        ];
        let (svg, shown) = curve(&all, &caches);
        assert_eq!(shown, vec!["L1d".to_string(), "L3".to_string()]);
        assert_eq!(svg.matches("class=\"cache-marker\"").count(), 2);
        assert!(svg.contains(">L1d 32 KiB</text>"));
    }
}
