//! Flame graphs as inline SVG (no script): one per profiled case, and a
//! differential one for a comparison (frame widths from the second
//! profile, colour by how much its share grew or shrank). Every frame
//! carries its function name and counts as a `<title>`.

use std::collections::BTreeMap;

use super::escape;
use crate::profile::symbols::KERNEL_MARK;

const WIDTH: f64 = 1200.0;
const ROW: f64 = 16.0;
/// Frames narrower than this (in SVG units) are not drawn.
const MIN_WIDTH: f64 = 0.4;

#[derive(Default)]
struct Node {
    count: u64,
    base: u64,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn add(&mut self, stack: &str, n: u64, base: bool) {
        let mut at = self;
        if base {
            at.base += n;
        } else {
            at.count += n;
        }
        for f in stack.split(';') {
            at = at.children.entry(f.to_string()).or_default();
            if base {
                at.base += n;
            } else {
                at.count += n;
            }
        }
    }

    fn depth(&self) -> usize {
        1 + self.children.values().map(Node::depth).max().unwrap_or(0)
    }
}

fn tree(folded: &BTreeMap<String, u64>, base: Option<&BTreeMap<String, u64>>) -> Node {
    let mut root = Node::default();
    for (s, n) in folded {
        root.add(s, *n, false);
    }
    for (s, n) in base.into_iter().flatten() {
        root.add(s, *n, true);
    }
    root
}

struct Draw<'a> {
    out: &'a mut String,
    total: u64,
    base_total: u64,
    height: f64,
    diff: bool,
}

fn colour(name: &str, seed: usize) -> String {
    let h = name.bytes().fold(seed as u32, |a, b| {
        a.wrapping_mul(31).wrapping_add(b as u32)
    });
    if name.ends_with(KERNEL_MARK) {
        format!("rgb(230,{},{})", 90 + h % 110, 40 + h % 40)
    } else {
        format!("rgb({},{},230)", 60 + h % 80, 140 + h % 80)
    }
}

fn diff_colour(delta: f64) -> String {
    // delta: change of share in [-1, 1]; full colour at 5 points.
    let t = (delta.abs() / 0.05).min(1.0);
    let fade = (255.0 - 175.0 * t) as u8;
    if delta >= 0.0 {
        format!("rgb(255,{fade},{fade})")
    } else {
        format!("rgb({fade},{fade},255)")
    }
}

impl Draw<'_> {
    fn node(&mut self, name: &str, n: &Node, x: f64, level: usize) {
        let w = WIDTH * n.count as f64 / self.total.max(1) as f64;
        if w < MIN_WIDTH {
            return;
        }
        let y = self.height - ROW * (level as f64 + 1.0);
        let share = n.count as f64 / self.total.max(1) as f64;
        let shown = name.strip_suffix(KERNEL_MARK).unwrap_or(name);
        let (title, fill) = if self.diff {
            let base = n.base as f64 / self.base_total.max(1) as f64;
            (
                format!(
                    "{shown} ({} samples, {:.2}%; baseline {} samples, {:.2}%; {:+.2} points)",
                    n.count,
                    share * 100.0,
                    n.base,
                    base * 100.0,
                    (share - base) * 100.0
                ),
                diff_colour(share - base),
            )
        } else {
            (
                format!("{shown} ({} samples, {:.2}%)", n.count, share * 100.0),
                colour(name, level),
            )
        };
        let chars = ((w - 4.0) / 7.0).max(0.0) as usize;
        let label: String = if shown.chars().count() <= chars {
            shown.to_string()
        } else if chars > 2 {
            shown.chars().take(chars - 2).collect::<String>() + ".."
        } else {
            String::new()
        };
        self.out.push_str(&format!(
            "<g><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" \
             height=\"{:.1}\" fill=\"{fill}\" rx=\"2\"/><text x=\"{:.1}\" y=\"{:.1}\" \
             font-size=\"12\" font-family=\"monospace\">{}</text></g>\n",
            escape(&title),
            ROW - 1.0,
            x + 3.0,
            y + ROW - 4.0,
            escape(&label)
        ));
        let mut cx = x;
        for (child, c) in &n.children {
            self.node(child, c, cx, level + 1);
            cx += WIDTH * c.count as f64 / self.total.max(1) as f64;
        }
    }
}

fn render(root: &Node, base_total: u64, diff: bool, caption: &str) -> String {
    let height = ROW * (root.depth() as f64) + 4.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"100%\" role=\"img\" aria-label=\"{}\">\n",
        escape(caption)
    );
    let mut d = Draw {
        out: &mut out,
        total: root.count,
        base_total,
        height,
        diff,
    };
    d.node("all", root, 0.0, 0);
    out.push_str("</svg>\n");
    out
}

/// The flame graph of one profile (root at the bottom).
pub fn svg(folded: &BTreeMap<String, u64>, caption: &str) -> String {
    render(&tree(folded, None), 0, false, caption)
}

/// A differential flame graph: frames sized by `other`, red where their
/// share grew from `base`, blue where it shrank.
pub fn diff_svg(
    base: &BTreeMap<String, u64>,
    other: &BTreeMap<String, u64>,
    caption: &str,
) -> String {
    let root = tree(other, Some(base));
    let base_total = root.base;
    render(&root, base_total, true, caption)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::folded::of as f;

    #[test]
    fn frames_carry_names_as_titles_and_widths_follow_samples() {
        let s = svg(
            &f(&[("main;fault_[k];clear_page_[k]", 3), ("main;a<b>", 1)]),
            "x",
        );
        assert!(s.starts_with("<svg") && !s.contains("<script"));
        assert!(
            s.contains("<title>clear_page (3 samples, 75.00%)</title>"),
            "{s}"
        );
        assert!(
            s.contains("<title>a&lt;b&gt; (1 samples, 25.00%)</title>"),
            "{s}"
        );
        assert!(s.contains("width=\"900.0\""), "{s}");
    }

    #[test]
    fn differential_titles_give_both_shares() {
        let s = diff_svg(
            &f(&[("a_[k]", 1), ("b_[k]", 1)]),
            &f(&[("a_[k]", 3), ("b_[k]", 1)]),
            "d",
        );
        assert!(
            s.contains("a (3 samples, 75.00%; baseline 1 samples, 50.00%; +25.00 points)"),
            "{s}"
        );
        assert!(s.contains("rgb(255,80,80)"), "{s}");
    }
}
