//! The comparison of runs, knob variants or sample files: cases matched
//! across sides, summaries, Welch p-values with Benjamini-Hochberg across
//! every row, bootstrap ratio intervals, vmstat spread, the ratio table of
//! seed 003, and what else differs between the runs. Analysis only: the
//! layout lives in `report::compare_layout`.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

use std::borrow::Cow;

use super::case_data::CaseData;
use super::case_groups::CaseMixture;
use super::mixture;
use super::paired::{self, PairedRatio, Pairing};
use super::run_diff::Difference;
use super::side::Side;
use super::significance::{
    BOOTSTRAP_MAX_VALUES, Moments, benjamini_hochberg, bootstrap_ratio_ci, bootstrap_rounds,
    figure_mean, log_t_ratio_ci_of, normal_ratio_ci, pct_better, row_seed, welch_p_of,
};
use super::summary::{Summary, summarise, summarise_sorted};
use super::vmstat_spread::vmstat_case;
pub use super::vmstat_spread::{Spread, VmstatCase, interesting_counter};
use super::work;
use crate::model::{Better, Figure};

/// Which variant divides which in the ratio table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum RatioOf {
    // Plain comments: a documented value would give `--help` its long
    // layout. B / A (the default: the second variant over the first).
    #[value(name = "B", alias = "B/A")]
    B,
    // A / B.
    #[value(name = "A", alias = "A/B")]
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
    /// How `ratio` and `ratio_ci` were found: "paired" (the samples were
    /// taken in the same rounds as the baseline's, knob variants or guest
    /// runs of one session: the geometric mean of the rounds' ratios and
    /// its t interval, `stats::paired`), else
    /// mean(side) / mean(baseline) with "welch-log" (Welch t on logs,
    /// positive values), "bootstrap" or "normal" (values not all positive).
    pub ratio_ci_method: String,
    /// How `p` was found: "paired-log" (paired t-test on the logs of the
    /// rounds' ratios), "welch-log" or "welch".
    pub p_method: String,
    /// Rounds paired, when `ratio_ci_method` is "paired".
    pub pairs: Option<usize>,
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
    /// How samples of the sides were taken together, if they were: rows
    /// whose cases have these rounds get paired ratios and p-values.
    pub pairing: Pairing,
    pub groups: Vec<Group>,
    pub vmstat: Vec<VmstatCase>,
    pub differences: Vec<Difference>,
    /// Case keys that some side has and the baseline lacks.
    pub unmatched: Vec<String>,
    pub ratio: Option<RatioTable>,
}

/// The group a case belongs to: its key less the task count.
fn group_of(c: &CaseData, key: &str) -> String {
    let tasks = format!("/{}", c.case().tasks);
    match key.find(&tasks) {
        Some(i) if key[i + tasks.len()..].is_empty() || key[i + tasks.len()..].starts_with('/') => {
            format!("{}{}", &key[..i], &key[i + tasks.len()..])
        }
        _ => key.to_string(),
    }
}

/// Groups in baseline order: (group name, [(case key, tasks)]).
type Order = Vec<(String, Vec<(String, usize)>)>;

/// Each side's cases by key.
type Lookup<'a> = [BTreeMap<&'a str, CaseData<'a>>];

/// What every cell of a row reads of one side's case, computed once.
struct Prepared<'a> {
    values: Cow<'a, [f64]>,
    summary: Option<Summary>,
    /// The mean as the figure is summarised (harmonic for rates).
    mean: f64,
    plain: Moments,
    /// Of the logs, when all values are positive.
    logs: Option<Moments>,
    mixture: Option<CaseMixture>,
}

impl<'a> Prepared<'a> {
    fn new(c: &CaseData<'a>, f: &Figure) -> Prepared<'a> {
        let values = c.values(&f.name);
        // One sort serves the median and the mixture search.
        let sorted = mixture::sorted(&values);
        Prepared {
            summary: summarise_sorted(&values, &sorted, f.rate),
            mean: figure_mean(&values, f.rate),
            plain: Moments::of(&values),
            logs: Moments::of_logs(&values),
            mixture: c.mixture(&f.name, &values, &sorted, 4),
            values,
        }
    }
}

/// Rows with more values than this (all sides) prepare their sides on
/// several threads.
const PARALLEL_VALUES: usize = 200_000;

/// How the sides of a comparison of `kind` were sampled together.
fn pairing_of(kind: &str) -> Pairing {
    match kind {
        "variants" => Pairing::Seq,
        "runs" => Pairing::Round,
        _ => Pairing::None,
    }
}

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
    let lookup: Vec<BTreeMap<&str, CaseData>> = sides
        .iter()
        .map(|s| s.cases.iter().map(|(k, c)| (k.as_str(), *c)).collect())
        .collect();
    let order = order(base);
    // Variants of one run are sampled in rounds; runs only when they are
    // guest runs of one session (kernels booted in turn).
    let by_round: Vec<bool> = sides
        .iter()
        .map(|s| kind == "variants" || same_guest_session(base, s))
        .collect();
    let rounds = bootstrap_rounds(bootstrap_values(&order, &lookup) * figures.len());
    let pairing = pairing_of(kind);

    let mut groups = Vec::new();
    for (gname, keys) in &order {
        for f in &figures {
            let rows = keys
                .iter()
                .map(|(key, tasks)| {
                    let cases: Vec<Option<&CaseData>> =
                        lookup.iter().map(|l| l.get(key.as_str())).collect();
                    // Sides of many samples are prepared side by side.
                    let large =
                        cases.iter().flatten().map(|c| c.count()).sum::<usize>() > PARALLEL_VALUES;
                    let prepared: Vec<Option<Prepared>> =
                        work::map(&cases, large, |c| c.map(|c| Prepared::new(c, f)));
                    let base_rounds = cases[0].and_then(|c| c.rounds(&f.name, pairing));
                    let cells = (0..sides.len())
                        .map(|i| {
                            let (Some(c), Some(p)) = (cases[i], &prepared[i]) else {
                                return empty_cell();
                            };
                            let seed = row_seed(
                                opts.seed,
                                &format!("{key}\0{}\0{}", f.name, sides[i].name),
                            );
                            let paired = match (&base_rounds, i > 0 && by_round[i]) {
                                (Some(b), true) => c
                                    .rounds(&f.name, pairing)
                                    .and_then(|r| paired::ratio(b, &r)),
                                _ => None,
                            };
                            let base = prepared[0].as_ref().unwrap_or(p);
                            cell(p, base, i > 0, f, paired, seed, rounds)
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
            .map(|f| ratio_table(f, &order, &lookup, opts.ratio_of, pairing))
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
        pairing,
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

/// The baseline's cases grouped by case less task count, in run order.
fn order(base: &Side) -> Order {
    let mut order: Order = Vec::new();
    for (key, c) in &base.cases {
        let g = group_of(c, key);
        match order.iter_mut().find(|(name, _)| *name == g) {
            Some((_, rows)) => rows.push((key.clone(), c.case().tasks)),
            None => order.push((g, vec![(key.clone(), c.case().tasks)])),
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
            let n = |l: &BTreeMap<&str, CaseData>| l.get(key.as_str()).map_or(0, |c| c.count());
            (1..lookup.len())
                .map(|i| n(&lookup[0]) + n(&lookup[i]))
                .sum::<usize>()
        })
        .sum()
}

/// One side's cell of a row: its summary, the change against the
/// baseline's, and (`tested`: not the baseline itself) the p-value and the
/// ratio's interval: paired where rounds pair the samples, else Welch's
/// (on logs for rates) and the ratio of means.
fn cell(
    p: &Prepared,
    base: &Prepared,
    tested: bool,
    f: &Figure,
    paired: Option<PairedRatio>,
    seed: u64,
    rounds: usize,
) -> Cell {
    let mut cell = empty_cell();
    cell.mixture = p.mixture.clone();
    cell.summary = p.summary.clone();
    let (Some(b), Some(s)) = (&base.summary, &p.summary) else {
        return cell;
    };
    cell.pct = Some(pcts(b, s, f.better));
    if b.mean != 0.0 {
        cell.ratio = Some(s.mean / b.mean);
    }
    if !tested {
        return cell;
    }
    if let Some(pr) = paired {
        cell.ratio = Some(pr.ratio);
        cell.ratio_ci = Some(pr.ci95);
        cell.ratio_ci_method = "paired".into();
        cell.p = Some(pr.p);
        cell.p_method = "paired-log".into();
        cell.pairs = Some(pr.pairs);
        return cell;
    }
    (cell.p, cell.p_method) = match (&base.logs, &p.logs) {
        (Some(lb), Some(ls)) if f.rate => (welch_p_of(lb, ls), "welch-log".into()),
        _ => (welch_p_of(&base.plain, &p.plain), "welch".into()),
    };
    let (base_vals, vals) = (&base.values[..], &p.values[..]);
    if let Some(ci) = base
        .logs
        .zip(p.logs)
        .and_then(|(lb, ls)| log_t_ratio_ci_of(&lb, &ls, p.mean / base.mean))
    {
        cell.ratio_ci = Some(ci);
        cell.ratio_ci_method = "welch-log".into();
    } else if base_vals.len() + vals.len() <= BOOTSTRAP_MAX_VALUES {
        cell.ratio_ci = bootstrap_ratio_ci(base_vals, vals, f.rate, seed, rounds);
        cell.ratio_ci_method = "bootstrap".into();
    } else {
        cell.ratio_ci = normal_ratio_ci(base_vals, vals, f.rate);
        cell.ratio_ci_normal = true;
        cell.ratio_ci_method = "normal".into();
    }
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
        p_method: String::new(),
        pairs: None,
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

fn ratio_table(
    f: &Figure,
    order: &Order,
    lookup: &Lookup,
    ratio_of: RatioOf,
    pairing: Pairing,
) -> RatioTable {
    let mut rows = Vec::new();
    for (g, keys) in order {
        for (key, tasks) in keys {
            let m = |i: usize| {
                lookup[i]
                    .get(key.as_str())
                    .and_then(|c| summarise(&c.values(&f.name), f.rate))
                    .map(|s| s.mean)
            };
            if let (Some(a), Some(b)) = (m(0), m(1)) {
                let rounds = |i: usize| -> Vec<(i64, f64)> {
                    lookup[i]
                        .get(key.as_str())
                        .and_then(|c| c.rounds(&f.name, pairing))
                        .unwrap_or_default()
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
