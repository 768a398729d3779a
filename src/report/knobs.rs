//! Knob A/B runs in the tables: one block per knob combination, each
//! rendered by the workload's own table as if it were a run of its own.

use crate::model::Run;

/// The run split by knob combination, in case order, labelled "k=v,k2=v2";
/// None for a run without knob variants. The parts carry no knobs, so they
/// render as plain runs.
pub fn split(run: &Run) -> Option<Vec<(String, Run)>> {
    if run.cases.iter().all(|c| c.case.knobs.is_empty()) {
        return None;
    }
    let mut blocks: Vec<(String, Run)> = Vec::new();
    for c in &run.cases {
        let label = c.case.knobs_label();
        let mut plain = c.clone();
        plain.case.knobs.clear();
        match blocks.iter_mut().find(|(l, _)| *l == label) {
            Some((_, r)) => r.cases.push(plain),
            None => {
                let mut meta = run.meta.clone();
                meta.knobs = serde_json::json!({});
                blocks.push((
                    label,
                    Run {
                        meta,
                        cases: vec![plain],
                    },
                ))
            }
        }
    }
    Some(blocks)
}

/// "knobs: thp_defrag = never, always (was madvise, restored)" lines from
/// the run's stored knob description; empty without knobs.
pub fn summary(run: &Run) -> String {
    let k = &run.meta.knobs;
    let Some(values) = k.get("values").and_then(|v| v.as_object()) else {
        return String::new();
    };
    let mut out = String::new();
    for (name, vals) in values {
        let vals: Vec<&str> = vals
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let was = k
            .get("original")
            .and_then(|o| o.get(name))
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        out.push_str(&format!(
            "knob {name}: {} (original {was})\n",
            vals.join(", ")
        ));
    }
    out
}
