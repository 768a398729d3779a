//! The autonumabench report (seed 001): elapsed/user/system per test, the
//! NUMA vmstat table with the local percent and AutoNUMA cost, and page
//! locality over time with the time to converge.

use crate::model::{Run, Sample};

fn fig(s: &Sample, k: &str) -> f64 {
    s.data.figures.get(k).copied().unwrap_or(f64::NAN)
}

fn cfg<'a>(run: &'a Run, k: &str) -> Option<&'a serde_json::Value> {
    run.meta.config.get(k)
}

pub fn text(run: &Run) -> String {
    let n = |k: &str| cfg(run, k).and_then(|v| v.as_u64()).unwrap_or(0);
    let mem_nodes = cfg(run, "nodes_with_memory")
        .and_then(|v| v.as_array())
        .map(|a| a.len())
        .unwrap_or(1);
    let threshold = cfg(run, "threshold")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.9);
    let mut out = format!(
        "{}: {} process(es) x {} threads, {} region, {} passes, first touch on node {}\n",
        run.meta.workload,
        n("processes"),
        n("threads"),
        crate::parse::format_size(n("size")),
        n("loops"),
        n("first_node"),
    );
    if mem_nodes <= 1 {
        out.push_str(
            "single NUMA node: NUMA balancing has nothing to move; locality is 100 % by construction\n",
        );
    }
    if let Some(nb) = cfg(run, "numa_balancing").and_then(|v| v.as_str()) {
        out.push_str(&format!("kernel.numa_balancing = {nb}\n"));
    }
    for c in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(c, "elapsed") else {
            out.push_str("  (no samples)\n");
            continue;
        };
        out.push_str(&format!("median of {reps} samples by elapsed time:\n"));
        for (label, k) in [
            ("Time Elapsed", "elapsed"),
            ("Time User", "user"),
            ("Time System", "system"),
        ] {
            out.push_str(&format!("{label:<30} {:>14.2}\n", fig(s, k)));
        }
        out.push_str(&format!(
            "{:<30} {:>14.0} (of {} expected)\n",
            "Passes done",
            fig(s, "passes"),
            n("loops") * n("processes") * n("threads")
        ));
        for (label, k) in [
            ("NUMA hint faults", "numa_hint_faults"),
            ("NUMA hint local faults", "numa_hint_faults_local"),
            ("NUMA hint local percent", "numa_hint_local%"),
            ("NUMA base PTE updates", "numa_pte_updates"),
            ("NUMA huge PMD updates", "numa_huge_pte_updates"),
            ("NUMA pages migrated", "numa_pages_migrated"),
            ("Page migrate success", "pgmigrate_success"),
            ("Page migrate failure", "pgmigrate_fail"),
        ] {
            out.push_str(&format!("{label:<30} {:>14.0}\n", fig(s, k)));
        }
        out.push_str(&format!(
            "{:<30} {:>14.2}\n",
            "AutoNUMA cost",
            fig(s, "autonuma_cost")
        ));
        out.push_str(&locality(s, threshold));
    }
    out
}

fn locality(s: &Sample, threshold: f64) -> String {
    let mut out = String::new();
    let pts: Vec<(f64, f64)> = (0..)
        .map_while(|i| {
            let t = s.data.figures.get(&format!("series/{i:03}/t"))?;
            let l = s.data.figures.get(&format!("series/{i:03}/locality"))?;
            Some((*t, *l))
        })
        .collect();
    if pts.is_empty() {
        return "page locality: not sampled (no /proc/PID/numa_maps)\n".into();
    }
    out.push_str(&format!(
        "page locality (pages on the nodes the threads run on, worst process), {} samples:\n ",
        fig(s, "locality_samples")
    ));
    let step = pts.len().div_ceil(8);
    for (t, l) in pts.iter().step_by(step) {
        out.push_str(&format!(" {t:.2}s {:.0}%", l * 100.0));
    }
    out.push('\n');
    match s.data.figures.get("converged_s") {
        Some(t) => out.push_str(&format!(
            "converged (locality >= {:.0} %) after {t:.2} s\n",
            threshold * 100.0
        )),
        None => out.push_str(&format!(
            "did not converge: locality stayed below {:.0} % (final {:.0} %)\n",
            threshold * 100.0,
            fig(s, "locality_final") * 100.0
        )),
    }
    out
}
