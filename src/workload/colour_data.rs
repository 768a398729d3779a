//! Folds the colour workload's task reports and analysis into a stored
//! sample: whole-sample figures, and per task its counts, statistics and
//! histograms ("llc:C", "l2:C", "run:LEN", "prun:LEN") so that `show` and
//! `compare` work from the store alone.

use std::collections::BTreeMap;

use crate::model::SampleData;
use crate::stats::colour::{Analysis, typical_run};

/// What one task measured.
pub struct TaskValues {
    pub cpu: i64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub wall: f64,
    pub user: f64,
    pub system: f64,
    pub faults: f64,
    pub touched: f64,
    pub present: f64,
    pub thp: f64,
    pub kpageflags: bool,
    pub swapped: f64,
}

fn hist_into(t: &mut BTreeMap<String, f64>, prefix: &str, h: &[u64]) {
    for (c, &n) in h.iter().enumerate() {
        t.insert(format!("{prefix}:{c}"), n as f64);
    }
}

fn runs_into(t: &mut BTreeMap<String, f64>, prefix: &str, h: &BTreeMap<u64, u64>) {
    for (len, &n) in h {
        t.insert(format!("{prefix}:{len}"), n as f64);
    }
}

pub fn sample_data(values: &[TaskValues], a: &Analysis) -> SampleData {
    let mut d = SampleData::default();
    let start = values.iter().map(|v| v.start_ns).min().unwrap_or(0);
    let end = values.iter().map(|v| v.end_ns).max().unwrap_or(0);
    let sum = |f: &dyn Fn(&TaskValues) -> f64| values.iter().map(f).sum::<f64>();
    let f = &mut d.figures;
    f.insert("wall".into(), end.saturating_sub(start) as f64 / 1e9);
    f.insert("user".into(), sum(&|v| v.user));
    f.insert("system".into(), sum(&|v| v.system));
    f.insert("faults".into(), sum(&|v| v.faults));
    f.insert("pages".into(), sum(&|v| v.touched));
    f.insert("pages_read".into(), sum(&|v| v.present));
    f.insert("thp_pages".into(), sum(&|v| v.thp));
    f.insert("swapped".into(), sum(&|v| v.swapped));
    f.insert(
        "thp_separated".into(),
        if values.iter().all(|v| v.kpageflags) {
            1.0
        } else {
            0.0
        },
    );
    let stats: Vec<_> = a
        .tasks
        .iter()
        .filter_map(|t| t.llc_stats.as_ref())
        .collect();
    if !stats.is_empty() {
        let min = |g: &dyn Fn(&crate::stats::colour::ColourStats) -> f64| {
            stats.iter().map(|s| g(s)).fold(f64::INFINITY, f64::min)
        };
        f.insert("eff_fraction".into(), min(&|s| s.effective_fraction));
        f.insert("eff_colours".into(), min(&|s| s.effective));
        f.insert("chi2_p_min".into(), min(&|s| s.p_value));
        f.insert(
            "eff_fraction_mean".into(),
            stats.iter().map(|s| s.effective_fraction).sum::<f64>() / stats.len() as f64,
        );
        f.insert(
            "cov_max".into(),
            stats.iter().map(|s| s.cov * 100.0).fold(0.0, f64::max),
        );
        f.insert("colours".into(), stats[0].colours as f64);
    }
    let l2: Vec<_> = a.tasks.iter().filter_map(|t| t.l2_stats.as_ref()).collect();
    if !l2.is_empty() {
        f.insert(
            "l2_eff_fraction".into(),
            l2.iter()
                .map(|s| s.effective_fraction)
                .fold(f64::INFINITY, f64::min),
        );
        f.insert("l2_colours".into(), l2[0].colours as f64);
    }
    let il = &a.interleave;
    f.insert("adjacent_pairs".into(), il.adjacent_pairs as f64);
    f.insert("switches".into(), il.switches as f64);
    f.insert("switch_fraction".into(), il.switch_fraction());
    f.insert("duplicate_frames".into(), il.duplicates as f64);

    d.tasks = values
        .iter()
        .zip(&a.tasks)
        .enumerate()
        .map(|(i, (v, t))| {
            let mut m: BTreeMap<String, f64> = [
                ("cpu", v.cpu as f64),
                ("start", v.start_ns.saturating_sub(start) as f64 / 1e9),
                ("wall", v.wall),
                ("user", v.user),
                ("system", v.system),
                ("faults", v.faults),
                ("pages", v.touched),
                ("pages_read", v.present),
                ("thp_pages", v.thp),
                ("swapped", v.swapped),
            ]
            .into_iter()
            .map(|(k, x)| (k.to_string(), x))
            .collect();
            if let Some(s) = &t.llc_stats {
                m.insert("base_pages".into(), s.pages as f64);
                m.insert("min".into(), s.min as f64);
                m.insert("max".into(), s.max as f64);
                m.insert("cov".into(), s.cov * 100.0);
                m.insert("chi2".into(), s.chi2);
                m.insert("p".into(), s.p_value);
                m.insert("eff".into(), s.effective);
                m.insert("eff_fraction".into(), s.effective_fraction);
            }
            if let Some(s) = &t.l2_stats {
                m.insert("l2_eff".into(), s.effective);
                m.insert("l2_eff_fraction".into(), s.effective_fraction);
                m.insert("l2_cov".into(), s.cov * 100.0);
            }
            if let Some(r) = typical_run(&t.runs) {
                m.insert("typical_run".into(), r as f64);
            }
            hist_into(&mut m, "llc", &t.llc);
            hist_into(&mut m, "l2", &t.l2);
            runs_into(&mut m, "run", &t.runs);
            if let Some(p) = il.runs.get(i) {
                runs_into(&mut m, "prun", p);
            }
            m
        })
        .collect();
    d
}
