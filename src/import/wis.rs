//! will-it-scale's runtest CSV: `tasks,processes,processes_idle,threads,
//! threads_idle,linear`, one row per task count. Processes and threads
//! become the variants `process` and `thread`, each with ops/s and idle %.
//! A file named after one of the VM tests vmscale runs itself (page_fault1,
//! tlb_flush2, ...) becomes a `wis` run of that test, so `compare` sets it
//! beside `vmscale run wis --test NAME`.

use super::Table;
use crate::error::{Error, Result};
use crate::model::{Better, Case, Figure, SampleData};

const HEADER: &str = "tasks,processes,processes_idle,threads,threads_idle,linear";

fn cell(s: &str) -> Result<Option<f64>> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        Ok(_) => Err(Error::Input(format!("'{s}' is not a finite number >= 0"))),
        Err(_) => Err(Error::Input(format!("'{s}' is not a number"))),
    }
}

/// Some(table) when the text is a runtest CSV; None when it is not one.
pub fn parse(text: &str, test: &str) -> Result<Option<Table>> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(head) = lines.next() else {
        return Ok(None);
    };
    if head.replace(' ', "") != HEADER {
        return Ok(None);
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let at = |e: String| Error::Input(format!("will-it-scale CSV line {}: {e}", i + 2));
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != 6 {
            return Err(at(format!("{} fields, the header has 6", cells.len())));
        }
        let v: Vec<Option<f64>> = cells
            .iter()
            .map(|c| cell(c))
            .collect::<Result<_>>()
            .map_err(|e| at(e.to_string()))?;
        let tasks = v[0]
            .filter(|t| *t >= 1.0 && t.fract() == 0.0 && *t <= crate::limits::MAX_TASKS as f64)
            .ok_or_else(|| {
                at(format!(
                    "tasks must be a whole number 1..{}",
                    crate::limits::MAX_TASKS
                ))
            })? as usize;
        for idle in [v[2], v[4]].into_iter().flatten() {
            if idle > 100.0 {
                return Err(at(format!("idle {idle} is not a percentage 0..100")));
            }
        }
        for (variant, ops, idle) in [("process", v[1], v[2]), ("thread", v[3], v[4])] {
            let Some(ops) = ops else { continue };
            let mut d = SampleData::default();
            d.figures.insert("ops/s".into(), ops);
            if let Some(idle) = idle {
                d.figures.insert("idle".into(), idle);
            }
            if let Some(linear) = v[5] {
                d.figures.insert("linear".into(), linear);
            }
            rows.push((Case::new(tasks, variant), d));
        }
    }
    if rows.is_empty() {
        return Err(Error::Input(
            "will-it-scale CSV has a header but no rows".into(),
        ));
    }
    let (workload, test) = match own_test(test) {
        Some(name) => (crate::workload::wis::SPEC.name, name),
        None => ("will-it-scale", test.to_string()),
    };
    Ok(Some(Table {
        workload,
        format: "will-it-scale",
        figures: vec![
            Figure::new("ops/s", "ops/s", Better::Higher, true),
            Figure::new("idle", "%", Better::Lower, false),
        ],
        config: serde_json::json!({ "imported": "will-it-scale", "test": test }),
        rows,
    }))
}

/// The vmscale `wis` test a file stem names: the test itself, or the test
/// followed by `-` or `.` and anything (page_fault1-6.18).
fn own_test(stem: &str) -> Option<String> {
    use clap::ValueEnum as _;
    crate::workload::wis::Test::value_variants()
        .iter()
        .map(crate::workload::options::name)
        .find(|name| {
            stem.strip_prefix(name.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.']))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_runtest_csv() {
        let t = parse(
            "tasks,processes,processes_idle,threads,threads_idle,linear\n\
             1,1000,50.0,990,50.1,1000\n2,1900,0.5,1500,0.7,2000\n",
            "page_fault1",
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.rows[1].0, Case::new(1, "thread"));
        assert_eq!(t.rows[2].1.figures["ops/s"], 1900.0);
        assert_eq!(t.rows[2].1.figures["idle"], 0.5);
        assert!(parse("a,b\n1,2\n", "x").unwrap().is_none());
        assert_eq!(t.workload, "wis");
        assert_eq!(t.config["test"], "page_fault1");
        let other = parse(&format!("{HEADER}\n1,2,3,4,5,6\n"), "futex1")
            .unwrap()
            .unwrap();
        assert_eq!(other.workload, "will-it-scale");
        let dated = parse(&format!("{HEADER}\n1,2,3,4,5,6\n"), "tlb_flush2-6.18").unwrap();
        assert_eq!(dated.unwrap().config["test"], "tlb_flush2");
        assert_eq!(own_test("page_fault10"), None);
        crate::error::assert_input(parse(&format!("{HEADER}\n1,2,3\n"), "x"));
        for bad in ["NaN", "inf", "-5", "1e400"] {
            let e = parse(&format!("{HEADER}\n1,{bad},0,1,0,1\n"), "x")
                .unwrap_err()
                .to_string();
            assert!(e.contains("line 2"), "{bad}: {e}");
        }
        crate::error::assert_input(parse(&format!("{HEADER}\n1e30,1,0,1,0,1\n"), "x"));
    }
}
