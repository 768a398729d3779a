//! will-it-scale's runtest CSV: `tasks,processes,processes_idle,threads,
//! threads_idle,linear`, one row per task count. Processes and threads
//! become the variants `process` and `thread`, each with ops/s and idle %.

use super::Table;
use crate::model::{Better, Case, Figure, SampleData};

const HEADER: &str = "tasks,processes,processes_idle,threads,threads_idle,linear";

fn cell(s: &str) -> Result<Option<f64>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    s.parse::<f64>()
        .map(Some)
        .map_err(|_| format!("'{s}' is not a number"))
}

/// Some(table) when the text is a runtest CSV; None when it is not one.
pub fn parse(text: &str, test: &str) -> Result<Option<Table>, String> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(head) = lines.next() else {
        return Ok(None);
    };
    if head.replace(' ', "") != HEADER {
        return Ok(None);
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let at = |e: String| format!("will-it-scale CSV line {}: {e}", i + 2);
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != 6 {
            return Err(at(format!("{} fields, the header has 6", cells.len())));
        }
        let v: Vec<Option<f64>> = cells
            .iter()
            .map(|c| cell(c))
            .collect::<Result<_, _>>()
            .map_err(at)?;
        let tasks = v[0]
            .filter(|t| *t >= 1.0 && t.fract() == 0.0)
            .ok_or_else(|| at("tasks must be a whole number >= 1".into()))?
            as usize;
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
        return Err("will-it-scale CSV has a header but no rows".into());
    }
    Ok(Some(Table {
        workload: "will-it-scale",
        format: "will-it-scale",
        figures: vec![
            Figure::new("ops/s", "ops/s", Better::Higher, true),
            Figure::new("idle", "%", Better::Lower, false),
        ],
        config: serde_json::json!({ "imported": "will-it-scale", "test": test }),
        rows,
    }))
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
        assert!(parse(&format!("{HEADER}\n1,2,3\n"), "x").is_err());
    }
}
