//! The autonumabench report (seed 001): elapsed/user/system per test, the
//! NUMA vmstat table with the local percent and AutoNUMA cost, and page
//! locality over time with the time to converge.

use super::cells::names;
use super::export::{Align, Block, KeyValue, Layout, Table};
use crate::model::{Run, Sample};
use crate::workload::numa::Stored;
use crate::workload::stored::view;

fn fig(s: &Sample, k: &str) -> f64 {
    s.data.figures.get(k).copied().unwrap_or(f64::NAN)
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let mem_nodes = cfg.nodes_with_memory.as_ref().map_or(1, |n| n.len());
    let threshold = cfg.threshold.unwrap_or(0.9);
    let each = match cfg.region_per_process {
        Some(true) => " per process",
        _ => "",
    };
    let shape = format!(
        "{}: {} process(es) x {} threads, {} region{each},",
        run.meta.workload,
        cfg.processes,
        cfg.threads,
        crate::units::size(cfg.size),
    );
    let passes = format!("{} passes,", cfg.loops);
    // Hundreds of threads push the passes to the second line.
    let sep = if shape.len() + 1 + passes.len() <= 80 {
        " "
    } else {
        "\n"
    };
    let mut out = format!(
        "{shape}{sep}{passes}{}first touch on node {}\n",
        if sep == " " { "\n" } else { " " },
        cfg.first_node,
    );
    if mem_nodes <= 1 {
        out.push_str(
            "single NUMA node: NUMA balancing has nothing to move;\n\
             locality is 100 % by construction\n",
        );
    }
    let measured = run.cases.iter().any(|c| {
        c.samples
            .iter()
            .any(|s| s.data.figures.contains_key("numa_balancing"))
    });
    if let Some(nb) = &cfg.numa_balancing
        && !measured
    {
        out.push_str(&format!("kernel.numa_balancing = {nb}\n"));
    }
    let mut blocks = vec![Block::Paragraph(out)];
    for c in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(c, "elapsed") else {
            blocks.push(Block::Paragraph("  (no samples)\n".into()));
            continue;
        };
        let mut about = String::new();
        // The value in force while the sample ran (knob variants change it);
        // runs stored before it was measured show the planned one above.
        if let Some(nb) = s.data.figures.get("numa_balancing") {
            about.push_str(&format!("kernel.numa_balancing = {nb} while measured\n"));
        }
        if let Some(l) = s.data.figures.get("first_touch_local") {
            let end = s
                .data
                .figures
                .get("end_on_first_node")
                .map_or(String::new(), |e| {
                    format!(", {:.1} % at the end", e * 100.0)
                });
            about.push_str(&format!(
                "pages on node {}: {:.1} % after first touch{end}\n",
                cfg.first_node,
                l * 100.0,
            ));
        }
        if !about.is_empty() {
            blocks.push(Block::Paragraph(about));
        }
        let mut pairs = Vec::new();
        for (label, k) in [
            ("Time Elapsed", "elapsed"),
            ("Time User", "user"),
            ("Time System", "system"),
        ] {
            pairs.push((label.to_string(), format!("{:.2}", fig(s, k))));
        }
        pairs.push((
            "Passes done".to_string(),
            format!(
                "{:>14.0} (of {} expected)",
                fig(s, "passes"),
                cfg.loops * cfg.processes * cfg.threads
            ),
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
            // mmtests truncates the local percent (57.8 prints 57); counts are whole.
            pairs.push((label.to_string(), format!("{:.0}", fig(s, k).trunc())));
        }
        pairs.push((
            "AutoNUMA cost".to_string(),
            format!("{:.2}", fig(s, "autonuma_cost")),
        ));
        blocks.push(Block::KeyValue(KeyValue {
            title: format!("median of {reps} samples by elapsed time:"),
            pairs,
            widths: Some((30, 14)),
        }));
        blocks.extend(locality(s, threshold));
    }
    blocks
}

fn locality(s: &Sample, threshold: f64) -> Vec<Block> {
    let pts: Vec<(f64, f64, Option<f64>)> = (0..)
        .map_while(|i| {
            let t = s.data.figures.get(&format!("series/{i:03}/t"))?;
            let l = s.data.figures.get(&format!("series/{i:03}/locality"))?;
            let mean = s.data.figures.get(&format!("series/{i:03}/mean")).copied();
            Some((*t, *l, mean))
        })
        .collect();
    if pts.is_empty() {
        return vec![Block::Paragraph(
            "page locality: not sampled (no move_pages: kernel without NUMA?)\n".into(),
        )];
    }
    // Runs stored before per-thread locality judged each process as a whole.
    let per_thread = s.data.figures.contains_key("locality_threads");
    let title = if per_thread {
        format!(
            "page locality over time ({} samples): per thread, its sampled\n\
             pages on the node of the CPU it ran on; worst and mean thread:",
            fig(s, "locality_samples")
        )
    } else {
        format!(
            "page locality over time ({} samples): pages on the nodes the\n\
             threads run on, worst process and mean of the processes:",
            fig(s, "locality_samples")
        )
    };
    let step = pts.len().div_ceil(8);
    let mut shown: Vec<_> = pts.iter().step_by(step).collect();
    if let Some(last) = pts.last()
        && shown.last() != Some(&last)
    {
        shown.push(last);
    }
    let rows = shown
        .into_iter()
        .map(|(t, l, mean)| {
            vec![
                format!("{t:.2}s"),
                format!("{:.1}%", l * 100.0),
                mean.map_or("-".to_string(), |m| format!("{:.1}%", m * 100.0)),
            ]
        })
        .collect();
    let end = match s.data.figures.get("converged_s") {
        Some(t) => format!(
            "converged (locality >= {:.0} % from then to the end) after {t:.2} s\n",
            threshold * 100.0
        ),
        None => format!(
            "did not converge: locality not at or above {:.0} % to the end (final {:.1} %)\n",
            threshold * 100.0,
            fig(s, "locality_final") * 100.0
        ),
    };
    vec![
        Block::Table(Table {
            title,
            header: vec![names(&["time", "worst", "mean"])],
            align: vec![Align::Right; 3],
            rows,
            layout: Some(Layout::spaced(&[12, 9, 9])),
        }),
        Block::Paragraph(end),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{case, run, sample};

    /// Seed 001's first column: 381604 local of 659753 hint faults is
    /// 57.84 %, which mmtests prints as 57.
    #[test]
    fn local_percent_is_truncated_as_mmtests_prints_it() {
        let figures = crate::monitor::autonuma::figures(&std::collections::BTreeMap::from([
            ("numa_hint_faults".to_string(), 659753),
            ("numa_hint_faults_local".to_string(), 381604),
        ]));
        let mut one = sample().figure("elapsed", 1.0);
        for (k, v) in &figures {
            one = one.figure(k, *v);
        }
        let run = run("numa01").case(case(1, "numa01").sample(one)).build();
        let out = crate::report::export::text::blocks(&blocks(&run));
        let line = out
            .lines()
            .find(|l| l.starts_with("NUMA hint local percent"))
            .unwrap();
        assert!(line.ends_with(" 57"), "{line}");
    }

    /// Runs stored before region_per_process and numa_balancing were
    /// recorded, and with a size of another type, still get their header.
    #[test]
    fn an_old_config_missing_fields_still_names_what_it_has() {
        let cfg = serde_json::json!({
            "processes": 2, "threads": 4, "size": "1G", "loops": 3,
            "first_node": 1, "nodes_with_memory": [0, 1]
        });
        let one = sample().figure("elapsed", 1.0);
        let r = run("numa01")
            .config(cfg)
            .case(case(1, "numa01").sample(one))
            .build();
        let out = crate::report::export::text::blocks(&blocks(&r));
        let head: Vec<&str> = out.lines().take(2).collect();
        assert_eq!(
            head,
            [
                "numa01: 2 process(es) x 4 threads, 0 B region, 3 passes,",
                "first touch on node 1"
            ],
            "{out}"
        );
        assert!(!out.contains("kernel.numa_balancing"), "{out}");
        assert!(out.contains("(of 24 expected)"), "{out}");
    }
}
