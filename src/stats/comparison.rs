//! The comparison of runs, knob variants or sample files: cases matched
//! across sides, summaries, Welch p-values with Benjamini-Hochberg across
//! every row, bootstrap ratio intervals, vmstat spread, the ratio table of
//! seed 003, and what else differs between the runs. Analysis only: the
//! layout lives in `report::compare_layout`.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::case_groups::{self, CaseMixture};
use super::compare::{
    BOOTSTRAP_MAX_VALUES, benjamini_hochberg, bootstrap_ratio_ci, bootstrap_rounds, figure_p,
    log_t_ratio_ci, normal_ratio_ci, pct_better, row_seed,
};
use super::paired::{self, PairedRatio};
use super::summary::{Summary, mean, stddev, summarise};
use crate::model::{Better, CaseSamples, Figure, Run, RunMeta};

/// One column of a comparison: a run, one knob variant of a run, or a file.
pub struct Side<'a> {
    /// First header line ("run 3", "A", "a.txt").
    pub name: String,
    /// Second header line (label, knob values), may be empty.
    pub label: String,
    pub run_id: Option<i64>,
    pub meta: &'a RunMeta,
    /// Cases by the key they are matched on, in run order.
    pub cases: Vec<(String, &'a CaseSamples)>,
}

impl<'a> Side<'a> {
    /// A whole run, its cases matched by `Case::key()`.
    /// A guest run's column is named by its kernel release (mmtests'
    /// columns), with the run id and label under it.
    pub fn run(run: &'a Run) -> Side<'a> {
        let id = run.meta.id;
        let label = run.meta.label.clone().unwrap_or_default();
        let guest_release = run.meta.machine["kernel_release"]
            .as_str()
            .filter(|_| run.meta.machine["guest"].is_object());
        let (name, label) = match guest_release {
            Some(rel) if label.is_empty() || label == rel => (rel.to_string(), format!("run {id}")),
            Some(rel) => (rel.to_string(), format!("{label} (run {id})")),
            None => (format!("run {id}"), label),
        };
        Side {
            name,
            label,
            run_id: Some(run.meta.id),
            meta: &run.meta,
            cases: run.cases.iter().map(|c| (c.case.key(), c)).collect(),
        }
    }

    /// The knob variants of one run: cases that differ only in their knob
    /// values, one side per distinct knob setting, matched on the rest of
    /// the key. Fewer than two variants gives an empty list.
    pub fn variants(run: &'a Run) -> Vec<Side<'a>> {
        let mut settings: Vec<String> = Vec::new();
        for c in &run.cases {
            let k = c.case.knobs_label();
            if !settings.contains(&k) {
                settings.push(k);
            }
        }
        if settings.len() < 2 {
            return Vec::new();
        }
        settings
            .iter()
            .enumerate()
            .map(|(i, setting)| Side {
                name: variant_letter(i),
                label: if setting.is_empty() {
                    "(no knobs)".into()
                } else {
                    setting.clone()
                },
                run_id: Some(run.meta.id),
                meta: &run.meta,
                cases: run
                    .cases
                    .iter()
                    .filter(|c| &c.case.knobs_label() == setting)
                    .map(|c| (format!("{}/{}", c.case.variant, c.case.tasks), c))
                    .collect(),
            })
            .collect()
    }
}

/// "A", "B", ... "Z", "AA", ...
pub fn variant_letter(i: usize) -> String {
    let mut s = String::new();
    let mut n = i + 1;
    while n > 0 {
        n -= 1;
        s.insert(0, (b'A' + (n % 26) as u8) as char);
        n /= 26;
    }
    s
}

/// Which variant divides which in the ratio table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RatioOf {
    /// B / A (the default: the second variant over the first).
    B,
    /// A / B.
    A,
}

pub struct Options {
    pub alpha: f64,
    pub seed: u64,
    /// Restrict to these figures (all declared figures when empty).
    pub figures: Vec<String>,
    pub ratio_of: RatioOf,
}

#[derive(Debug, Clone, Serialize)]
pub struct SideInfo {
    pub name: String,
    pub label: String,
    pub run_id: Option<i64>,
}

/// One side's figures for one row.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub summary: Option<Summary>,
    /// % change against the baseline, positive = better, for Min, mean,
    /// Stddev, CoeffVar, Max.
    pub pct: Option<[f64; 6]>,
    pub p: Option<f64>,
    /// Benjamini-Hochberg adjusted p-value.
    pub p_adjusted: Option<f64>,
    pub significant: bool,
    /// mean(side) / mean(baseline), and its 95 % CI.
    pub ratio: Option<f64>,
    pub ratio_ci: Option<(f64, f64)>,
    /// The interval is the normal (delta-method) one, not the bootstrap
    /// (rows over `BOOTSTRAP_MAX_VALUES` values that are not all positive).
    pub ratio_ci_normal: bool,
    /// How `ratio_ci` was found: "welch-log" (Welch t on logs, positive
    /// values), "bootstrap" or "normal" (values not all positive), or
    /// "paired-round" (guest runs of one session, paired by round).
    pub ratio_ci_method: String,
    /// The side's samples fall into two groups in this figure.
    pub mixture: Option<CaseMixture>,
}

/// One task count of a case group.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: String,
    pub tasks: usize,
    pub cells: Vec<Cell>,
}

/// One figure of one case group (the case without its task count).
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub case: String,
    pub figure: Figure,
    pub rows: Vec<Row>,
}

/// Mean and standard deviation of a vmstat counter's per-sample delta.
#[derive(Debug, Clone, Serialize)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    pub stddev: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct VmstatCase {
    pub key: String,
    /// Counter -> one spread per side (None where the side lacks the case).
    pub counters: BTreeMap<String, Vec<Option<Spread>>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub what: String,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RatioRow {
    pub case: String,
    pub tasks: usize,
    pub a: f64,
    pub b: f64,
    pub ratio: f64,
    /// The ratio from neighbouring A/B pairs (same round), drift cancelled.
    pub paired: Option<PairedRatio>,
}

/// Seed 003's table: variant A, variant B and their ratio by task count.
#[derive(Debug, Clone, Serialize)]
pub struct RatioTable {
    pub figure: Figure,
    pub ratio_of: RatioOf,
    pub rows: Vec<RatioRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub sides: Vec<SideInfo>,
    /// "runs", "variants" or "files".
    pub kind: String,
    pub alpha: f64,
    pub seed: u64,
    pub tests: usize,
    /// Bootstrap resampling rounds: 2000, fewer for very large rows.
    pub bootstrap_rounds: usize,
    pub groups: Vec<Group>,
    pub vmstat: Vec<VmstatCase>,
    pub differences: Vec<Difference>,
    /// Case keys that some side has and the baseline lacks.
    pub unmatched: Vec<String>,
    pub ratio: Option<RatioTable>,
}

fn values(c: &CaseSamples, figure: &str) -> Vec<f64> {
    c.measured()
        .filter_map(|s| s.data.figures.get(figure).copied())
        .filter(|v| v.is_finite())
        .collect()
}

/// The group a case belongs to: its key less the task count.
fn group_of(c: &CaseSamples, key: &str) -> String {
    let tasks = format!("/{}", c.case.tasks);
    match key.find(&tasks) {
        Some(i) if key[i + tasks.len()..].is_empty() || key[i + tasks.len()..].starts_with('/') => {
            format!("{}{}", &key[..i], &key[i + tasks.len()..])
        }
        _ => key.to_string(),
    }
}

/// Counters worth a table: faults, THP, NUMA, migration, compaction, reclaim.
pub fn interesting_counter(name: &str) -> bool {
    name == "pgfault"
        || name == "pgmajfault"
        || [
            "thp_",
            "numa_",
            "pgmigrate_",
            "compact_",
            "pgsteal_",
            "pgscan_",
            "pswp",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Groups in baseline order: (group name, [(case key, tasks)]).
type Order = Vec<(String, Vec<(String, usize)>)>;

/// Each side's cases by key.
type Lookup<'a> = [BTreeMap<&'a str, &'a CaseSamples>];

/// Compares `sides`, the first being the baseline.
pub fn compare(sides: &[Side], kind: &str, opts: &Options) -> Comparison {
    let base = &sides[0];
    let figures: Vec<Figure> = base
        .meta
        .figures
        .iter()
        .filter(|f| opts.figures.is_empty() || opts.figures.contains(&f.name))
        .cloned()
        .collect();
    let lookup: Vec<BTreeMap<&str, &CaseSamples>> = sides
        .iter()
        .map(|s| s.cases.iter().map(|(k, c)| (k.as_str(), *c)).collect())
        .collect();
    let order = order(base);
    let by_round: Vec<bool> = sides.iter().map(|s| same_guest_session(base, s)).collect();
    let rounds = bootstrap_rounds(bootstrap_values(&order, &lookup) * figures.len());

    let mut groups = Vec::new();
    for (gname, keys) in &order {
        for f in &figures {
            let rows = keys
                .iter()
                .map(|(key, tasks)| {
                    let base_case = lookup[0][key.as_str()];
                    let base_vals = values(base_case, &f.name);
                    let base = (base_vals.as_slice(), summarise(&base_vals, f.rate));
                    let cells = lookup
                        .iter()
                        .enumerate()
                        .map(|(i, l)| {
                            let seed = row_seed(
                                opts.seed,
                                &format!("{key}\0{}\0{}", f.name, sides[i].name),
                            );
                            l.get(key.as_str()).map_or_else(empty_cell, |c| {
                                let mut cell = cell(c, f, &base, i > 0, seed, rounds);
                                if i > 0 && by_round[i] {
                                    paired_by_round(&mut cell, base_case, c, f);
                                }
                                cell
                            })
                        })
                        .collect();
                    Row {
                        key: key.clone(),
                        tasks: *tasks,
                        cells,
                    }
                })
                .collect();
            groups.push(Group {
                case: gname.clone(),
                figure: f.clone(),
                rows,
            });
        }
    }
    let tests = adjust(&mut groups, opts.alpha);

    let vmstat = base
        .cases
        .iter()
        .filter_map(|(key, _)| vmstat_case(key, &lookup))
        .collect();
    let differences = if kind == "runs" {
        super::run_diff::differences(sides)
    } else {
        Vec::new()
    };
    let ratio = if kind == "variants" && sides.len() == 2 {
        figures
            .first()
            .map(|f| ratio_table(f, &order, &lookup, opts.ratio_of))
    } else {
        None
    };

    Comparison {
        sides: sides
            .iter()
            .map(|s| SideInfo {
                name: s.name.clone(),
                label: s.label.clone(),
                run_id: s.run_id,
            })
            .collect(),
        kind: kind.into(),
        alpha: opts.alpha,
        seed: opts.seed,
        tests,
        bootstrap_rounds: rounds,
        groups,
        vmstat,
        differences,
        unmatched: unmatched(sides),
        ratio,
    }
}

/// Guest runs of one `vmscale guest` session: booted in turn, round by
/// round, so their samples pair by round.
fn same_guest_session(a: &Side, b: &Side) -> bool {
    let session = |s: &Side| {
        s.meta.machine["guest"]["session"]
            .as_str()
            .map(str::to_string)
    };
    session(a).is_some() && session(a) == session(b)
}

/// Replaces a cell's ratio and interval by the estimate paired by guest
/// round, where both sides have two rounds or more.
fn paired_by_round(cell: &mut Cell, base: &CaseSamples, c: &CaseSamples, f: &Figure) {
    if let Some(p) = paired::by_round(base, c, &f.name) {
        cell.ratio = Some(p.ratio);
        cell.ratio_ci = Some(p.ci95);
        cell.ratio_ci_normal = false;
        cell.ratio_ci_method = "paired-round".into();
    }
}

/// The baseline's cases grouped by case less task count, in run order.
fn order(base: &Side) -> Order {
    let mut order: Order = Vec::new();
    for (key, c) in &base.cases {
        let g = group_of(c, key);
        match order.iter_mut().find(|(name, _)| *name == g) {
            Some((_, rows)) => rows.push((key.clone(), c.case.tasks)),
            None => order.push((g, vec![(key.clone(), c.case.tasks)])),
        }
    }
    order
}

/// The values one bootstrap round resamples for one figure over the whole
/// comparison (each side's row with the baseline's): one budget for all.
fn bootstrap_values(order: &Order, lookup: &Lookup) -> usize {
    order
        .iter()
        .flat_map(|(_, keys)| keys)
        .map(|(key, _)| {
            let n = |l: &BTreeMap<&str, &CaseSamples>| {
                l.get(key.as_str()).map_or(0, |c| c.measured().count())
            };
            (1..lookup.len())
                .map(|i| n(&lookup[0]) + n(&lookup[i]))
                .sum::<usize>()
        })
        .sum()
}

/// One side's cell of a row: its summary, the change against the
/// baseline's values, and (`tested`: not the baseline itself) the Welch
/// p-value and the ratio's interval.
fn cell(
    c: &CaseSamples,
    f: &Figure,
    (base_vals, base_sum): &(&[f64], Option<Summary>),
    tested: bool,
    seed: u64,
    rounds: usize,
) -> Cell {
    let vals = values(c, &f.name);
    let summary = summarise(&vals, f.rate);
    let mut cell = empty_cell();
    cell.mixture = case_groups::find(c, &f.name, 4);
    if let (Some(b), Some(s)) = (base_sum, &summary) {
        cell.pct = Some(pcts(b, s, f.better));
        if b.mean != 0.0 {
            cell.ratio = Some(s.mean / b.mean);
        }
        if tested {
            cell.p = figure_p(base_vals, &vals, f.rate);
            if let Some(ci) = log_t_ratio_ci(base_vals, &vals, f.rate) {
                cell.ratio_ci = Some(ci);
                cell.ratio_ci_method = "welch-log".into();
            } else if base_vals.len() + vals.len() <= BOOTSTRAP_MAX_VALUES {
                cell.ratio_ci = bootstrap_ratio_ci(base_vals, &vals, f.rate, seed, rounds);
                cell.ratio_ci_method = "bootstrap".into();
            } else {
                cell.ratio_ci = normal_ratio_ci(base_vals, &vals, f.rate);
                cell.ratio_ci_normal = true;
                cell.ratio_ci_method = "normal".into();
            }
        }
    }
    cell.summary = summary;
    cell
}

/// Benjamini-Hochberg across every row of the comparison: sets each
/// tested cell's adjusted p-value and significance; the number of tests.
fn adjust(groups: &mut [Group], alpha: f64) -> usize {
    let mut ps = Vec::new();
    for g in groups.iter() {
        for r in &g.rows {
            for c in r.cells.iter().skip(1) {
                ps.push(c.p);
            }
        }
    }
    let adjusted = benjamini_hochberg(&ps);
    let mut it = adjusted.into_iter();
    for g in groups.iter_mut() {
        for r in &mut g.rows {
            for c in r.cells.iter_mut().skip(1) {
                c.p_adjusted = it.next().flatten();
                c.significant = c.p_adjusted.is_some_and(|q| q < alpha);
            }
        }
    }
    ps.iter().filter(|p| p.is_some()).count()
}

/// Case keys some side has and the baseline lacks.
fn unmatched(sides: &[Side]) -> Vec<String> {
    let base_keys: BTreeSet<&str> = sides[0].cases.iter().map(|(k, _)| k.as_str()).collect();
    let mut out: Vec<String> = Vec::new();
    for s in &sides[1..] {
        for (k, _) in &s.cases {
            if !base_keys.contains(k.as_str()) && !out.contains(k) {
                out.push(k.clone());
            }
        }
    }
    out
}

fn empty_cell() -> Cell {
    Cell {
        summary: None,
        pct: None,
        p: None,
        p_adjusted: None,
        significant: false,
        ratio: None,
        ratio_ci: None,
        ratio_ci_normal: false,
        ratio_ci_method: String::new(),
        mixture: None,
    }
}

/// Changes of Min, Median, mean, Stddev, CoeffVar and Max, in the order
/// of the compare block's rows.
fn pcts(b: &Summary, s: &Summary, better: Better) -> [f64; 6] {
    [
        pct_better(b.min, s.min, better),
        pct_better(b.median, s.median, better),
        pct_better(b.mean, s.mean, better),
        pct_better(b.stddev, s.stddev, Better::Lower),
        pct_better(b.coeff_var, s.coeff_var, Better::Lower),
        pct_better(b.max, s.max, better),
    ]
}

/// A side's measured sample count and its per-sample counter deltas.
type SideCounters<'a> = (usize, HashMap<&'a str, Vec<f64>>);

fn vmstat_case(key: &str, lookup: &Lookup) -> Option<VmstatCase> {
    // One pass over each side's samples: counter -> per-sample deltas.
    let mut per_side: Vec<Option<SideCounters>> = Vec::new();
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for l in lookup {
        let Some(c) = l.get(key) else {
            per_side.push(None);
            continue;
        };
        let n = c.measured().count();
        let mut acc: HashMap<&str, Vec<f64>> = HashMap::new();
        for (i, s) in c.measured().enumerate() {
            for (name, v) in &s.vmstat {
                if *v != 0 && interesting_counter(name) {
                    acc.entry(name.as_str()).or_insert_with(|| vec![0.0; n])[i] = *v as f64;
                }
            }
        }
        names.extend(acc.keys().copied());
        per_side.push(Some((n, acc)));
    }
    if names.is_empty() {
        return None;
    }
    let counters = names
        .into_iter()
        .map(|name| {
            let spreads = per_side
                .iter()
                .map(|side| {
                    let (n, acc) = side.as_ref()?;
                    Some(match acc.get(name) {
                        Some(v) => Spread {
                            n: *n,
                            mean: mean(v),
                            stddev: stddev(v),
                        },
                        None => Spread {
                            n: *n,
                            mean: 0.0,
                            stddev: 0.0,
                        },
                    })
                })
                .collect();
            (name.to_string(), spreads)
        })
        .collect();
    Some(VmstatCase {
        key: key.to_string(),
        counters,
    })
}

fn ratio_table(f: &Figure, order: &Order, lookup: &Lookup, ratio_of: RatioOf) -> RatioTable {
    let mut rows = Vec::new();
    for (g, keys) in order {
        for (key, tasks) in keys {
            let m = |i: usize| {
                lookup[i]
                    .get(key.as_str())
                    .and_then(|c| summarise(&values(c, &f.name), f.rate))
                    .map(|s| s.mean)
            };
            if let (Some(a), Some(b)) = (m(0), m(1)) {
                let rounds = |i: usize| -> Vec<(i64, f64)> {
                    lookup[i].get(key.as_str()).map_or(Vec::new(), |c| {
                        c.measured()
                            .filter_map(|s| s.data.figures.get(&f.name).map(|v| (s.seq, *v)))
                            .collect()
                    })
                };
                let (ra, rb) = (rounds(0), rounds(1));
                let (ratio, paired) = match ratio_of {
                    RatioOf::B => (b / a, paired::ratio(&ra, &rb)),
                    RatioOf::A => (a / b, paired::ratio(&rb, &ra)),
                };
                rows.push(RatioRow {
                    case: g.clone(),
                    tasks: *tasks,
                    a,
                    b,
                    ratio,
                    paired,
                });
            }
        }
    }
    RatioTable {
        figure: f.clone(),
        ratio_of,
        rows,
    }
}
