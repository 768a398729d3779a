//! Colour histograms: per case, the median sample's LLC colour counts of
//! every task as small multiples, one bar per colour, with the line a
//! uniform spread would give (the task's base pages / colours). Bars are
//! labelled while there is room; past 64 colours only the ends are.

use super::svg::escape;
use crate::model::{CaseSamples, Run};

/// Above this many colours the bars carry no labels.
const LABEL_MAX_COLOURS: u64 = 64;
const PANEL_W: f64 = 520.0;
const PANEL_H: f64 = 170.0;
/// Inside a panel: title above, colour labels below, counts at the left.
const PAD_TOP: f64 = 22.0;
const PAD_BOTTOM: f64 = 26.0;
const PAD_LEFT: f64 = 40.0;
const PAD_RIGHT: f64 = 8.0;
const BAR: &str = "#0072b2";

pub fn plots(run: &Run) -> Vec<(String, String)> {
    let colours = run
        .meta
        .config
        .get("colours")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    if colours == 0 {
        return Vec::new();
    }
    run.cases
        .iter()
        .filter_map(|c| {
            let svg = histograms(c, colours)?;
            Some((
                format!(
                    "page colours, {}: pages per LLC colour (of {colours}) \
                     for each task in the median sample by worst effective fraction; \
                     the dashed line is a uniform spread",
                    crate::report::colour::case_name(&c.case)
                ),
                svg,
            ))
        })
        .collect()
}

/// Counts of colour 0..colours from a task's "llc:C" keys (absent = 0).
fn counts(t: &std::collections::BTreeMap<String, f64>, colours: u64) -> Vec<f64> {
    (0..colours)
        .map(|c| t.get(&format!("llc:{c}")).copied().unwrap_or(0.0))
        .collect()
}

/// The small multiples of one case, or None without a median sample.
pub fn histograms(case: &CaseSamples, colours: u64) -> Option<String> {
    let (sample, _) = crate::report::median_sample(case, "eff_fraction")?;
    let tasks = &sample.data.tasks;
    if tasks.is_empty() {
        return None;
    }
    let cols = if tasks.len() == 1 { 1 } else { 2 };
    let rows = tasks.len().div_ceil(cols);
    let (w, h) = (PANEL_W * cols as f64, PANEL_H * rows as f64);
    // One y scale for all panels, so tasks compare at a glance.
    let all: Vec<Vec<f64>> = tasks.iter().map(|t| counts(t, colours)).collect();
    let ymax = all.iter().flatten().copied().fold(1.0, f64::max);
    let mut s = format!(
        "<svg class=\"colour-histograms\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" \
         height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\">\n\
         <rect x=\"0\" y=\"0\" width=\"{w:.0}\" height=\"{h:.0}\" fill=\"#ffffff\"/>\n"
    );
    for (i, (t, h)) in tasks.iter().zip(&all).enumerate() {
        let x = PANEL_W * (i % cols) as f64;
        let y = PANEL_H * (i / cols) as f64;
        s.push_str(&panel(i, t, h, ymax, x, y));
    }
    s.push_str("</svg>");
    Some(s)
}

fn panel(
    i: usize,
    t: &std::collections::BTreeMap<String, f64>,
    counts: &[f64],
    ymax: f64,
    x0: f64,
    y0: f64,
) -> String {
    let k = counts.len();
    let pages: f64 = t
        .get("base_pages")
        .copied()
        .unwrap_or_else(|| counts.iter().sum());
    let g = |key: &str| t.get(key).copied().unwrap_or(f64::NAN);
    let cpu = if g("cpu") >= 0.0 {
        format!(" (CPU {})", g("cpu"))
    } else {
        String::new()
    };
    let (px, py) = (x0 + PAD_LEFT, y0 + PAD_TOP);
    let pw = PANEL_W - PAD_LEFT - PAD_RIGHT;
    let ph = PANEL_H - PAD_TOP - PAD_BOTTOM;
    let bw = pw / k as f64;
    let yof = |v: f64| py + ph - ph * (v / ymax).clamp(0.0, 1.0);
    let mut s = format!(
        "<g class=\"task\">\n<text x=\"{px:.1}\" y=\"{:.1}\" font-size=\"12\">task {i}{cpu}: \
         {pages} pages, min {} max {}, CoV {:.1} %, effective fraction {:.2}</text>\n\
         <rect x=\"{px:.1}\" y=\"{py:.1}\" width=\"{pw:.1}\" height=\"{ph:.1}\" fill=\"none\" \
         stroke=\"#cccccc\"/>\n",
        y0 + 14.0,
        g("min"),
        g("max"),
        g("cov"),
        g("eff_fraction"),
    );
    // Count axis: 0 and the top.
    for v in [0.0, ymax] {
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\" \
             dominant-baseline=\"middle\">{v:.0}</text>\n",
            px - 4.0,
            yof(v)
        ));
    }
    // Hairline gaps between bars only while bars are wide enough to show them.
    let gap = if bw >= 4.0 { 1.0 } else { 0.0 };
    for (c, &n) in counts.iter().enumerate() {
        let bx = px + c as f64 * bw;
        let by = yof(n);
        s.push_str(&format!(
            "<rect class=\"bar\" x=\"{bx:.2}\" y=\"{by:.2}\" width=\"{:.2}\" height=\"{:.2}\" \
             fill=\"{BAR}\"><title>colour {c}: {n} pages</title></rect>\n",
            (bw - gap).max(0.1),
            py + ph - by
        ));
    }
    // Colour labels: every bar that has room while k <= 64; else the ends.
    let every = if k as u64 <= LABEL_MAX_COLOURS {
        (14.0 / bw).ceil().max(1.0) as usize
    } else {
        usize::MAX
    };
    for c in 0..k {
        let label = if every == usize::MAX {
            c == 0 || c == k - 1
        } else {
            c % every == 0
        };
        if label {
            s.push_str(&format!(
                "<text class=\"colour-label\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"9\" \
                 text-anchor=\"middle\">{c}</text>\n",
                px + (c as f64 + 0.5) * bw,
                py + ph + 11.0
            ));
        }
    }
    if every == usize::MAX {
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">colour \
             ({k}, unlabelled)</text>\n",
            px + pw / 2.0,
            py + ph + 22.0
        ));
    } else {
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">colour</text>\n",
            px + pw / 2.0,
            py + ph + 22.0
        ));
    }
    if pages > 0.0 && k > 0 {
        let ey = yof(pages / k as f64);
        s.push_str(&format!(
            "<line class=\"expect\" x1=\"{px:.1}\" y1=\"{ey:.2}\" x2=\"{:.1}\" y2=\"{ey:.2}\" \
             stroke=\"#d55e00\" stroke-width=\"2\" stroke-dasharray=\"6,4\">\
             <title>{}</title></line>\n",
            px + pw,
            escape(&format!(
                "uniform: {:.2} pages per colour",
                pages / k as f64
            ))
        ));
    }
    s.push_str("</g>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{self, sample};

    fn case(tasks: usize, colours: u64) -> CaseSamples {
        let task: Vec<(String, f64)> = (0..colours)
            .map(|c| (format!("llc:{c}"), (c % 5) as f64))
            .chain([("base_pages".to_string(), 2.0 * colours as f64)])
            .collect();
        let task: Vec<(&str, f64)> = task.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let mut s = sample().seq(1).figure("eff_fraction", 0.9);
        for _ in 0..tasks {
            s = s.task(&task);
        }
        build::case(tasks, "parallel").sample(s).build()
    }

    #[test]
    fn one_bar_per_colour_per_task_and_an_expectation_line() {
        let svg = histograms(&case(3, 16), 16).unwrap();
        assert_eq!(svg.matches("class=\"task\"").count(), 3);
        assert_eq!(svg.matches("class=\"bar\"").count(), 3 * 16);
        assert_eq!(svg.matches("class=\"expect\"").count(), 3);
        assert_eq!(svg.matches("class=\"colour-label\"").count(), 3 * 16);
    }

    #[test]
    fn many_colours_keep_bars_and_drop_labels() {
        let svg = histograms(&case(2, 512), 512).unwrap();
        assert_eq!(svg.matches("class=\"bar\"").count(), 2 * 512);
        assert_eq!(svg.matches("class=\"colour-label\"").count(), 2 * 2);
    }

    #[test]
    fn no_samples_no_plot() {
        let mut c = case(1, 4);
        c.samples.clear();
        assert!(histograms(&c, 4).is_none());
    }
}
