//! The c2c heat map: one CPU x CPU grid per variant, each cell coloured by
//! the pair's median one-way latency over the samples, with the value
//! written in the cell while the grid is small and a colour scale beside it.
//! Plain SVG <rect>s: each cell carries a <title>, which browsers show on
//! hover, so a 512-CPU grid stays readable without per-cell text. Only the
//! planned pairs are drawn: a sample of a big machine's pairs (c2c's
//! default past 16 CPUs) keeps every measured pair and a small page.

use std::collections::HashMap;

use super::svg::escape;
use crate::model::{CaseSamples, Run};
use crate::report::cells;
use crate::report::ticks::Ticks;
use crate::workload::c2c::{Pair, pair_figure};

/// Grids up to this many CPUs get the value written in each cell.
const TEXT_MAX_CPUS: usize = 16;
/// The grid's side in pixels (cells shrink to fit, never below MIN_CELL).
const GRID_PX: f64 = 560.0;
const MIN_CELL: f64 = 1.0;
const MAX_CELL: f64 = 56.0;
/// Margins: left and top hold the CPU labels, right the colour scale.
const LEFT: f64 = 48.0;
const TOP: f64 = 40.0;
const SCALE_W: f64 = 110.0;
/// Steps drawn in the colour scale.
const SCALE_STEPS: usize = 32;

/// Viridis at five points, interpolated linearly: perceptually ordered and
/// readable by the colour-blind.
const RAMP: [(f64, f64, f64); 5] = [
    (68.0, 1.0, 84.0),
    (59.0, 82.0, 139.0),
    (33.0, 145.0, 140.0),
    (94.0, 201.0, 98.0),
    (253.0, 231.0, 37.0),
];

/// The ramp's colour at t in [0, 1], and whether text on it should be white.
pub fn ramp(t: f64) -> (String, bool) {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (RAMP.len() - 1) as f64;
    let i = (x.floor() as usize).min(RAMP.len() - 2);
    let f = x - i as f64;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    let (r, g, bl) = (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2));
    let luma = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * bl as f64;
    (format!("#{r:02x}{g:02x}{bl:02x}"), luma < 140.0)
}

fn config<T: serde::de::DeserializeOwned + Default>(run: &Run, key: &str) -> T {
    run.meta
        .config
        .get(key)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// One heat map per variant of a c2c run.
pub fn plots(run: &Run) -> Vec<(String, String)> {
    let pairs: Vec<Pair> = config(run, "pairs");
    let cpus: Vec<usize> = config(run, "cpus");
    if cpus.len() < 2 {
        return Vec::new();
    }
    run.cases
        .iter()
        .map(|c| {
            let n = c.measured().count();
            (
                format!(
                    "c2c {}: one-way cache-line hand-off latency (ns, median of {n} sample{}) \
                     between every pair of {} CPUs; darker is faster{}",
                    c.case.variant,
                    if n == 1 { "" } else { "s" },
                    cpus.len(),
                    if cpus.len() > TEXT_MAX_CPUS {
                        "; hover a cell for its value"
                    } else {
                        ""
                    }
                ),
                grid(c, &pairs, &cpus),
            )
        })
        .collect()
}

fn fmt_ns(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The SVG for one variant: cells, CPU labels, colour scale.
pub fn grid(case: &CaseSamples, pairs: &[Pair], cpus: &[usize]) -> String {
    let n = cpus.len();
    let values: HashMap<(usize, usize), f64> = pairs
        .iter()
        .filter_map(|p| {
            let v = cells::median(case, &pair_figure(p.a, p.b))?;
            Some(((p.a.min(p.b), p.a.max(p.b)), v))
        })
        .collect();
    let lo = values.values().copied().fold(f64::INFINITY, f64::min);
    let hi = values.values().copied().fold(f64::NEG_INFINITY, f64::max);
    let t = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };

    let cell = (GRID_PX / n as f64).clamp(MIN_CELL, MAX_CELL);
    let side = cell * n as f64;
    let width = LEFT + side + SCALE_W;
    let height = TOP + side.max(160.0) + 16.0;
    let text = n <= TEXT_MAX_CPUS;
    // At most ~32 CPU labels per axis.
    let label_every = n.div_ceil(32).max(1);
    let font = (cell * 0.45).clamp(8.0, 12.0);

    let mut s = format!(
        "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" \
         height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\">\n\
         <rect x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\" fill=\"#ffffff\"/>\n\
         <text x=\"{:.1}\" y=\"12\" font-size=\"11\" text-anchor=\"middle\">CPU</text>\n\
         <text x=\"10\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" \
         transform=\"rotate(-90 10 {:.1})\">CPU</text>\n",
        LEFT + side / 2.0,
        TOP + side / 2.0,
        TOP + side / 2.0,
    );
    for (i, cpu) in cpus.iter().enumerate() {
        if i % label_every != 0 {
            continue;
        }
        let mid = i as f64 * cell + cell / 2.0;
        s.push_str(&format!(
            "<text class=\"cpu-label\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" \
             text-anchor=\"middle\">{cpu}</text>\n\
             <text class=\"cpu-label\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" \
             text-anchor=\"end\" dominant-baseline=\"middle\">{cpu}</text>\n",
            LEFT + mid,
            TOP - 6.0,
            LEFT - 4.0,
            TOP + mid,
        ));
    }
    // Row a, column b: symmetric, the diagonal grey; only the planned
    // pairs are drawn (a sample of a big machine's pairs leaves the rest
    // of the grid blank, and the page small).
    let index: HashMap<usize, usize> = cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let geom = |row: usize, col: usize| {
        let (x, y) = (LEFT + col as f64 * cell, TOP + row as f64 * cell);
        (
            x,
            y,
            format!("x=\"{x:.2}\" y=\"{y:.2}\" width=\"{cell:.2}\" height=\"{cell:.2}\""),
        )
    };
    for (i, &a) in cpus.iter().enumerate() {
        let (_, _, g) = geom(i, i);
        s.push_str(&format!(
            "<rect class=\"diag\" {g} fill=\"#dddddd\"><title>CPU {a}</title></rect>\n"
        ));
    }
    for p in pairs {
        let (Some(&i), Some(&j)) = (index.get(&p.a), index.get(&p.b)) else {
            continue;
        };
        for (row, col) in [(i, j), (j, i)] {
            let (a, b) = (cpus[row], cpus[col]);
            let (x, y, g) = geom(row, col);
            let Some(&v) = values.get(&(p.a.min(p.b), p.a.max(p.b))) else {
                s.push_str(&format!(
                    "<rect class=\"missing\" {g} fill=\"#ffffff\" stroke=\"#cccccc\">\
                     <title>CPUs {a}-{b}: not measured</title></rect>\n"
                ));
                continue;
            };
            let (fill, dark) = ramp(t(v));
            s.push_str(&format!(
                "<rect class=\"cell\" {g} fill=\"{fill}\">\
                 <title>CPUs {a}-{b}: {} ns</title></rect>\n",
                fmt_ns(v)
            ));
            if text {
                s.push_str(&format!(
                    "<text class=\"cell-value\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"{font:.0}\" \
                     text-anchor=\"middle\" \
                     dominant-baseline=\"middle\" fill=\"{}\">{}</text>\n",
                    x + cell / 2.0,
                    y + cell / 2.0,
                    if dark { "#ffffff" } else { "#000000" },
                    fmt_ns(v)
                ));
            }
        }
    }
    s.push_str(&scale(LEFT + side + 24.0, TOP, side.max(160.0), lo, hi));
    s.push_str("</svg>");
    s
}

/// A vertical colour scale from lo (bottom) to hi (top), with three ticks.
fn scale(x: f64, y: f64, h: f64, lo: f64, hi: f64) -> String {
    if !lo.is_finite() || !hi.is_finite() {
        return format!(
            "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"11\">no pairs measured</text>\n",
            y + 12.0
        );
    }
    let step_h = h / SCALE_STEPS as f64;
    let mut s = format!(
        "<g class=\"scale\">\n<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"11\">ns</text>\n",
        y - 6.0
    );
    for k in 0..SCALE_STEPS {
        // k = 0 at the top (hi).
        let t = 1.0 - (k as f64 + 0.5) / SCALE_STEPS as f64;
        let (fill, _) = ramp(t);
        s.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{:.2}\" width=\"16\" height=\"{:.2}\" fill=\"{fill}\"/>\n",
            y + k as f64 * step_h,
            step_h + 0.3
        ));
    }
    let ticks = if hi > lo {
        vec![(hi, y), ((lo + hi) / 2.0, y + h / 2.0), (lo, y + h)]
    } else {
        vec![(lo, y + h / 2.0)]
    };
    // One tick (every pair the same) has no step: it reads like a cell.
    let labels = Ticks::of(&ticks.iter().map(|t| t.0).collect::<Vec<_>>());
    let label = |v: f64| if hi > lo { labels.label(v) } else { fmt_ns(v) };
    for (v, ty) in ticks {
        s.push_str(&format!(
            "<line x1=\"{:.1}\" y1=\"{ty:.1}\" x2=\"{:.1}\" y2=\"{ty:.1}\" stroke=\"#000000\"/>\n\
             <text x=\"{:.1}\" y=\"{ty:.1}\" font-size=\"11\" dominant-baseline=\"middle\">{}</text>\n",
            x + 16.0,
            x + 20.0,
            x + 23.0,
            escape(&label(v))
        ));
    }
    s.push_str("</g>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{self, sample};

    fn case(values: &[(usize, usize, f64)]) -> CaseSamples {
        let mut s = sample().seq(1);
        for &(a, b, v) in values {
            s = s.figure(&pair_figure(a, b), v);
        }
        build::case(2, "cas").sample(s).build()
    }

    fn all_pairs(cpus: &[usize]) -> Vec<Pair> {
        let mut out = Vec::new();
        for (i, &a) in cpus.iter().enumerate() {
            for &b in &cpus[i + 1..] {
                out.push(Pair {
                    a,
                    b,
                    smt: false,
                    cross_node: false,
                    class: None,
                });
            }
        }
        out
    }

    #[test]
    fn two_cpus_give_two_cells_with_values() {
        let cpus = [0, 1];
        let svg = grid(&case(&[(0, 1, 34.8)]), &all_pairs(&cpus), &cpus);
        assert_eq!(svg.matches("class=\"cell\"").count(), 2);
        assert_eq!(svg.matches("class=\"diag\"").count(), 2);
        assert_eq!(svg.matches("class=\"cell-value\"").count(), 2);
        assert_eq!(
            svg.matches(">34.8</text>").count(),
            3,
            "two cells and the scale"
        );
    }

    #[test]
    fn large_grids_drop_cell_text_and_thin_labels() {
        let cpus: Vec<usize> = (0..128).collect();
        let pairs = all_pairs(&cpus);
        let vals: Vec<(usize, usize, f64)> = pairs
            .iter()
            .map(|p| (p.a, p.b, 20.0 + (p.b - p.a) as f64))
            .collect();
        let svg = grid(&case(&vals), &pairs, &cpus);
        assert_eq!(svg.matches("class=\"cell\"").count(), 128 * 127);
        assert_eq!(svg.matches("class=\"cell-value\"").count(), 0);
        assert_eq!(svg.matches("class=\"cpu-label\"").count(), 2 * 32);
    }

    #[test]
    fn a_sample_of_512_cpus_draws_its_pairs_only() {
        let cpus: Vec<usize> = (0..512).collect();
        let pairs: Vec<Pair> = (0..48)
            .map(|k| Pair {
                a: k,
                b: 256 + 5 * k,
                smt: false,
                cross_node: true,
                class: None,
            })
            .collect();
        let vals: Vec<(usize, usize, f64)> = pairs
            .iter()
            .map(|p| (p.a, p.b, 100.0 + p.a as f64))
            .collect();
        let svg = grid(&case(&vals), &pairs, &cpus);
        assert_eq!(svg.matches("class=\"cell\"").count(), 96);
        assert_eq!(svg.matches("class=\"diag\"").count(), 512);
        assert_eq!(svg.matches("class=\"missing\"").count(), 0);
        assert!(
            svg.contains("CPUs 47-491: 147"),
            "the pair's value on hover"
        );
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
    }

    #[test]
    fn missing_pairs_are_marked() {
        let cpus = [0, 1, 2];
        let svg = grid(&case(&[(0, 1, 10.0)]), &all_pairs(&cpus), &cpus);
        assert_eq!(svg.matches("class=\"cell\"").count(), 2);
        assert_eq!(svg.matches("class=\"missing\"").count(), 4);
    }

    #[test]
    fn ramp_ends() {
        assert_eq!(ramp(0.0).0, "#440154");
        assert_eq!(ramp(1.0).0, "#fde725");
        assert!(ramp(0.0).1 && !ramp(1.0).1);
    }
}
