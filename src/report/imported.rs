//! Imported runs reprinted in the layout they came in: pft tables with their
//! own Rep column, will-it-scale as its runtest CSV columns.

use crate::model::Run;

/// True for runs this renderer prints.
pub fn handles(run: &Run) -> bool {
    run.meta.origin.starts_with("imported")
}

fn fig(run: &Run, i: usize, name: &str) -> Vec<f64> {
    run.cases[i]
        .measured()
        .filter_map(|s| s.data.figures.get(name).copied())
        .collect()
}

pub fn text(run: &Run) -> String {
    match run.meta.workload.as_str() {
        "pft" => pft(run),
        _ => crate::report::generic::text(run),
    }
}

/// The table as Lameter printed it: times to 0.01 s, rates to 0.001.
fn pft(run: &Run) -> String {
    let mut out = String::new();
    if let Some(c) = run.meta.config.get("caption").and_then(|c| c.as_str()) {
        out.push_str(&format!("(after: \"{c}\")\n"));
    }
    out.push_str(
        "   Gb Rep  Thr CLine      User     System       Wall    flt/cpu/s   fault/wsec\n",
    );
    for (i, c) in run.cases.iter().enumerate() {
        let n = c.measured().count();
        for k in 0..n {
            let g = |name: &str| fig(run, i, name).get(k).copied().unwrap_or(f64::NAN);
            out.push_str(&format!(
                "{:>5} {:>3} {:>4} {:>5} {:>9.2}s {:>9.2}s {:>9.2}s {:>12.3} {:>12.3}\n",
                g("gb"),
                g("rep"),
                c.case.tasks,
                g("cline"),
                g("user"),
                g("system"),
                g("wall"),
                g("flt/cpu/s"),
                g("fault/wsec"),
            ));
        }
    }
    out
}
