//! A figure's curve in the terminal, for `show --plot`: the mean by task
//! count on a log2 axis, one marker per variant, in 80 columns. Runs whose
//! variants hold one task count each (latency sizes, c2c pairs) get a bar
//! per variant instead.

use super::series::Series;
use super::ticks::Ticks;

const PLOT_WIDTH: usize = 60;
const PLOT_HEIGHT: usize = 14;
const MARKERS: [char; 8] = ['*', 'o', '+', 'x', '#', '@', '%', '&'];

/// The plot of `series` (all of one figure), with a title and a legend.
pub fn render(title: &str, series: &[Series]) -> String {
    let series: Vec<&Series> = series.iter().filter(|s| !s.points.is_empty()).collect();
    if series.is_empty() {
        return format!("{title}\nno measured samples to plot\n");
    }
    if series.iter().all(|s| s.points.len() == 1) {
        return bars(title, &series);
    }
    curve(title, &series)
}

fn curve(title: &str, series: &[&Series]) -> String {
    let means = |s: &Series| -> Vec<(f64, f64)> {
        s.points
            .iter()
            .map(|p| ((p.tasks.max(1) as f64).log2(), p.mean_ci().0))
            .collect()
    };
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| means(s)).collect();
    let x_max = all.iter().map(|p| p.0).fold(0.0, f64::max).max(1.0);
    let y_max = all.iter().map(|p| p.1).fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let mut grid = vec![vec![' '; PLOT_WIDTH]; PLOT_HEIGHT];
    let col = |x: f64| ((x / x_max) * (PLOT_WIDTH - 1) as f64).round() as usize;
    let row = |y: f64| {
        let r = ((y.max(0.0) / y_max) * (PLOT_HEIGHT - 1) as f64).round() as usize;
        PLOT_HEIGHT - 1 - r.min(PLOT_HEIGHT - 1)
    };
    for (i, s) in series.iter().enumerate() {
        let pts = means(s);
        // Dots along the straight segment between neighbouring points.
        for w in pts.windows(2) {
            let (c0, c1) = (col(w[0].0), col(w[1].0));
            for c in c0 + 1..c1 {
                let t = (c - c0) as f64 / (c1 - c0) as f64;
                let r = row(w[0].1 + t * (w[1].1 - w[0].1));
                if let Some(cell) = grid[r].get_mut(c).filter(|cell| **cell == ' ') {
                    *cell = '.';
                }
            }
        }
        for &(x, y) in &pts {
            grid[row(y)][col(x)] = MARKERS[i % MARKERS.len()];
        }
    }
    let unit = &series[0].figure.unit;
    let mut out = format!("{title}\n");
    let ticks = Ticks::new(y_max / 2.0, y_max);
    for (r, line) in grid.iter().enumerate() {
        let label = match r {
            0 => ticks.label(y_max),
            _ if r == PLOT_HEIGHT / 2 => ticks.label(y_max / 2.0),
            _ if r == PLOT_HEIGHT - 1 => ticks.label(0.0),
            _ => String::new(),
        };
        let body: String = line.iter().collect();
        out.push_str(&format!("{label:>9} |{}\n", body.trim_end()));
    }
    out.push_str(&format!("{:>9} +{}\n", "", "-".repeat(PLOT_WIDTH)));
    // Task counts under their columns (log2 axis).
    let mut ticks = vec![' '; PLOT_WIDTH + 8];
    let tasks = super::series::task_counts(series.iter().copied());
    let mut free_from = 0;
    for n in tasks {
        let c = col((n.max(1) as f64).log2());
        let text = n.to_string();
        if c >= free_from && c + text.len() <= ticks.len() {
            for (k, ch) in text.chars().enumerate() {
                ticks[c + k] = ch;
            }
            free_from = c + text.len() + 1;
        }
    }
    let ticks: String = ticks.iter().collect();
    out.push_str(&format!("{:>9}  {}\n", "", ticks.trim_end()));
    out.push_str(&format!(
        "{:>9}  tasks (log2 axis); y: mean {}{}\n",
        "",
        series[0].figure.name,
        if unit.is_empty() {
            String::new()
        } else {
            format!(" ({unit})")
        }
    ));
    for (i, s) in series.iter().enumerate() {
        out.push_str(&format!(
            "{:>9}  {} {}\n",
            "",
            MARKERS[i % MARKERS.len()],
            s.variant
        ));
    }
    out
}

fn bars(title: &str, series: &[&Series]) -> String {
    let name_w = series
        .iter()
        .map(|s| s.variant.chars().count())
        .max()
        .unwrap_or(0)
        .min(24);
    let y_max = series
        .iter()
        .map(|s| s.points[0].mean_ci().0)
        .fold(0.0, f64::max);
    let bar_w = 80 - name_w - 12;
    // A tenth of the longest bar: finer than that the bars do not show.
    let number = Ticks::new(y_max / 10.0, y_max);
    let mut out = format!("{title}\n");
    for s in series {
        let v = s.points[0].mean_ci().0;
        let n = if y_max > 0.0 {
            ((v.max(0.0) / y_max) * bar_w as f64).round() as usize
        } else {
            0
        };
        let name: String = s.variant.chars().take(name_w).collect();
        out.push_str(&format!(
            "{name:<name_w$} {:>9} {}\n",
            number.label(v),
            "#".repeat(n)
        ));
    }
    let f = &series[0].figure;
    out.push_str(&format!("mean {} ({}) per case\n", f.name, f.unit));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Better, Figure};
    use crate::report::series::Point;
    use crate::stats::summary::summarise;

    fn series(variant: &str, points: &[(usize, f64)]) -> Series {
        Series {
            figure: Figure::new("ops/s", "ops/s", Better::Higher, true),
            variant: variant.into(),
            points: points
                .iter()
                .map(|&(tasks, v)| Point {
                    tasks,
                    values: vec![v, v],
                    summary: summarise(&[v, v], true).unwrap(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_highest_point_is_on_the_top_row_and_everything_fits() {
        let out = render(
            "t",
            &[
                series("a", &[(1, 10.0), (2, 20.0), (4, 40.0)]),
                series("b", &[(1, 5.0), (4, 10.0)]),
            ],
        );
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
        let top = out.lines().nth(1).unwrap();
        assert!(top.ends_with('*'), "{out}");
        assert!(out.contains("o b"), "{out}");
        // 1, 2 and 4 tasks as ticks on a log2 axis: 2 sits halfway.
        let ticks = out
            .lines()
            .find(|l| l.trim_start().starts_with("1 "))
            .unwrap();
        let pos = |t: &str| ticks.find(t).unwrap();
        let (a, b) = (pos("2") - pos("1"), pos("4") - pos("2"));
        assert!(a.abs_diff(b) <= 1 && a > 20, "{ticks}");
    }

    #[test]
    fn one_point_per_variant_gives_bars_in_proportion() {
        let out = render("t", &[series("x", &[(1, 10.0)]), series("y", &[(1, 5.0)])]);
        let hashes = |name: &str| {
            out.lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .matches('#')
                .count()
        };
        // Half the value, half the bar (to the rounding of one column).
        assert!(hashes("x").abs_diff(2 * hashes("y")) <= 1, "{out}");
    }
}
