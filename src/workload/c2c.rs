//! c2c (seed 002): cache-line hand-off latency between pairs of CPUs,
//! by ping-pong on one cache line, either with compare-and-swap or with a
//! plain release store answered by an acquire load. The compare-and-swap
//! retry loop runs with a PAUSE (`spin_loop`) between attempts (`cas`) or
//! without (`cas-nopause`, as core-to-core-latency does): PAUSE backs the
//! waiting CPU off the line, so the two read differently. One sample measures
//! every chosen pair (all of a small machine, a sample per topology class of
//! a big one: c2c_pairs.rs); each pair's figure is the median one-way
//! latency over its batches of round trips (round-trip time / 2).

use super::spec::lower;
use super::values::task_values;
use std::sync::atomic::{AtomicU64, Ordering};

use super::stored::{Text, view_struct};
use serde::{Deserialize, Serialize};

use super::region::{self, Region};
use super::{Better, Case, Figure, Measure, SampleData, Workload, cost};
use crate::exec::{self, Mode, TaskReport, clock};
use crate::machine::Snapshot;
use crate::machine::cpulist::{self, CpuList};

use super::c2c_pairs::{self, Chosen, Class};
use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};

/// c2c in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "c2c",
    about: "Cache-line hand-off latency between pairs of CPUs, by topology class",
    examples: "Examples:\n  vmscale run c2c\n  \
vmscale run c2c --cpus 0-3 --variant cas\n  \
vmscale run c2c --pairs 16 --dry-run\n  \
vmscale run c2c --fresh-line --rounds 2000 --batches 100",
    // The figures every c2c run reports (a run adds one per CPU pair after
    // the headline).
    figures: &[
        lower("median ns", "ns"),
        lower("clock res ns", "ns"),
        lower("clock read ns", "ns"),
    ],
    report: super::Report::C2c,
    plots: super::Plots::Heatmap,
    size_flags: "fewer --cpus",
    quick,
    ..Spec::of::<Args>()
};

/// How the two CPUs hand the line over: a case's variant (`--variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Compare-and-swap, PAUSE between failed attempts.
    Cas,
    /// Compare-and-swap retried at once (as core-to-core-latency).
    CasNopause,
    /// Acquire loads (with PAUSE) until the turn, then a release store.
    Storeload,
}

impl Variant {
    /// The name on the command line and in a stored case.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Cas => "cas",
            Variant::CasNopause => "cas-nopause",
            Variant::Storeload => "storeload",
        }
    }

    /// What the report says the variant measures.
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Cas => "compare-and-swap ping-pong, PAUSE between retries",
            Variant::CasNopause => "compare-and-swap ping-pong, retried without PAUSE",
            Variant::Storeload => "release store / acquire load ping-pong",
        }
    }
}

impl std::str::FromStr for Variant {
    type Err = Error;
    fn from_str(s: &str) -> Result<Variant> {
        <Variant as clap::ValueEnum>::from_str(s, false).map_err(|_| {
            Error::Input(format!(
                "unknown c2c variant '{s}': use cas, cas-nopause, storeload or a list of them"
            ))
        })
    }
}

/// One CPU pair and what the topology says about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    /// The two CPUs are SMT siblings of one core.
    pub smt: bool,
    /// The two CPUs sit on different NUMA nodes.
    pub cross_node: bool,
    /// The topology class (absent in runs stored before classes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
}

impl Pair {
    /// The figure this pair's latency is stored under.
    pub fn figure(&self) -> String {
        pair_figure(self.a, self.b)
    }
}

pub fn pair_figure(a: usize, b: usize) -> String {
    format!("pair {a}-{b} ns")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub cpus: Vec<usize>,
    pub pairs: Vec<Pair>,
    pub variants: Vec<Variant>,
    /// A new line per pair, first touched by the pair's first CPU.
    pub fresh_line: bool,
    /// Round trips per timed batch.
    pub rounds: u64,
    /// Timed batches per pair; the pair's figure is their median.
    pub batches: u64,
    /// Pairs of `cpus` in all, and per class; `pairs` may be a sample.
    pub pairs_total: u64,
    pub classes: Vec<(Class, u64)>,
    /// Pairs sampled per class (`--pairs N`); `None`: every pair.
    pub per_class: Option<usize>,
}

view_struct! {
    /// What the c2c report prints of a stored run's configuration.
    pub struct Stored {
        pub cpus: Vec<usize>,
        pub pairs: Vec<Pair>,
        pub fresh_line: bool,
        pub rounds: Text,
        pub batches: Text,
        pub pairs_total: Option<u64>,
        pub classes: Vec<(Class, u64)>,
    }
}

pub struct C2c {
    cfg: Config,
}

/// The pairs of `cpus` (each unordered pair once), labelled from the
/// topology: all of them, or up to `per_class` of each topology class.
pub fn pairs(cpus: &[usize], m: &Snapshot, per_class: Option<usize>) -> (Vec<Pair>, Chosen) {
    let chosen = c2c_pairs::choose(cpus, m, per_class);
    let out = chosen
        .pairs
        .iter()
        .map(|&(a, b, class)| Pair {
            a,
            b,
            smt: class == Class::Smt,
            cross_node: matches!(class, Class::CrossNode { .. }),
            class: Some(class),
        })
        .collect();
    (out, chosen)
}

impl C2c {
    /// How many of the planned pairs fall in topology class `c`.
    fn measured_in(&self, c: Class) -> usize {
        self.cfg.pairs.iter().filter(|p| p.class == Some(c)).count()
    }
}

/// The configuration of a run: validates CPUs (online, at least two),
/// variants and sizes, and plans the pairs.
pub fn plan(
    cpus: Option<Vec<usize>>,
    variants: Vec<Variant>,
    fresh_line: bool,
    rounds: u64,
    batches: u64,
    per_class: Option<&str>,
    m: &Snapshot,
) -> Result<Config> {
    let online = m.online_cpus();
    let mut cpus = cpus.unwrap_or_else(|| online.clone());
    cpus.sort_unstable();
    cpus.dedup();
    if let Some(bad) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(Error::Input(format!(
            "--cpus names CPU {bad}, which is not online (online: {})",
            cpulist::format(&online)
        )));
    }
    if cpus.len() < 2 {
        return Err(Error::Input(format!(
            "c2c needs at least two CPUs to make a pair (got {}): widen --cpus",
            cpulist::format(&cpus)
        )));
    }
    if variants.is_empty() {
        return Err(Error::Input(
            "--variant needs at least one of cas, cas-nopause, storeload".into(),
        ));
    }
    if rounds == 0 || batches == 0 {
        return Err(Error::Input(
            "--rounds and --batches must be at least 1".into(),
        ));
    }
    let per_class = c2c_pairs::per_class(per_class, cpus.len())?;
    let (pairs, chosen) = pairs(&cpus, m, per_class);
    Ok(Config {
        cpus,
        pairs,
        variants,
        fresh_line,
        rounds,
        batches,
        pairs_total: chosen.total,
        classes: chosen.classes.into_iter().collect(),
        per_class,
    })
}

/// `run quick`: two variants at short rounds, where there is a pair of CPUs.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    if m.cpus.len() < 2 {
        return Vec::new();
    }
    vec![super::spec::args(
        "--variant cas,storeload --rounds 200 --batches 25",
    )]
}

// `vmscale run c2c`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// CPUs whose pairs are measured (default: every online CPU), e.g. 0-3,8
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<CpuList>,
    /// Ping-pong kinds, one or a list: cas (PAUSE between retries),
    /// cas-nopause (as core-to-core-latency), storeload
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cas,cas-nopause,storeload"
    )]
    pub variant: Vec<Variant>,
    /// A new cache line per pair, first touched by the pair's first CPU
    #[arg(long)]
    pub fresh_line: bool,
    /// Round trips per timed batch
    #[arg(long, default_value_t = 1000)]
    pub rounds: u64,
    /// Timed batches per pair; a pair's figure is their median
    #[arg(long, default_value_t = 50)]
    pub batches: u64,
    /// Pairs measured per topology class (SMT, same L3, same node, each node
    /// distance), or all [default: all up to 120 pairs (16 CPUs), else 8 per class]
    #[arg(long, value_name = "N|all")]
    pub pairs: Option<String>,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let cfg = plan(
            a.cpus.clone().map(|c| c.0),
            a.variant.clone(),
            a.fresh_line,
            a.rounds,
            a.batches,
            a.pairs.as_deref(),
            m,
        )?;
        env.made(cfg, |cfg| Ok(C2c { cfg }))
    }
}

impl Measure for C2c {
    fn cases(&self) -> Vec<Case> {
        Case::grid(self.cfg.variants.iter().map(|v| v.name()), &[2])
    }

    fn run_figures(&self, declared: Vec<Figure>) -> Vec<Figure> {
        // The headline, one figure per CPU pair, then the clock's quality.
        let mut f = declared;
        let clock = f.split_off(1);
        f.extend(
            self.cfg
                .pairs
                .iter()
                .map(|p| Figure::new(&p.figure(), "ns", Better::Lower, false)),
        );
        f.extend(clock);
        f
    }

    fn memory_need(&self) -> u64 {
        4096 * (self.cfg.pairs.len() as u64 + 1)
    }

    fn sample_s(&self, _case: &Case) -> f64 {
        let handoffs = 2.0 * (self.cfg.rounds * self.cfg.batches) as f64;
        let per_pair = cost::tasks_s(2) + handoffs * cost::HANDOFF_S;
        cost::SAMPLE_S + self.cfg.pairs.len() as f64 * per_pair
    }

    fn plan_detail(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("pairs".into(), self.cfg.pairs.len().into());
        m.insert("pairs_total".into(), self.cfg.pairs_total.into());
        m.insert("per_class".into(), self.cfg.per_class.into());
        let classes: serde_json::Map<String, serde_json::Value> = self
            .cfg
            .classes
            .iter()
            .map(|(c, n)| {
                let k = self.measured_in(*c);
                (c.label(), serde_json::json!({ "pairs": n, "measured": k }))
            })
            .collect();
        m.insert("classes".into(), classes.into());
        m
    }

    fn plan_notes(&self) -> Vec<String> {
        let how = match self.cfg.per_class {
            Some(k) => format!("up to {k} per topology class"),
            None => "every pair".into(),
        };
        let mut notes = vec![format!(
            "measures {} of {} pairs of {} CPUs ({how})",
            self.cfg.pairs.len(),
            self.cfg.pairs_total,
            self.cfg.cpus.len()
        )];
        let classes: Vec<String> = self
            .cfg
            .classes
            .iter()
            .map(|(c, n)| format!("{} {}/{n}", c.label(), self.measured_in(*c)))
            .collect();
        let classes: Vec<&str> = classes.iter().map(String::as_str).collect();
        notes.extend(crate::text::fold(&classes, "; ", 76, "", ""));
        notes
    }

    fn bounded_by_max_time(&self) -> bool {
        self.cfg.per_class.is_none() && self.cfg.pairs_total > c2c_pairs::ALL_BELOW
    }

    fn sample(&self, case: &Case) -> Result<SampleData> {
        let variant: Variant = case.variant.parse()?;
        let (res, read) = region::clock_quality();
        let common = Region::shared(4096)?;
        common.u64_at(0).store(0, Ordering::Relaxed);
        let mut d = SampleData::default();
        let mut medians = Vec::new();
        for p in &self.cfg.pairs {
            let fresh = if self.cfg.fresh_line {
                Some(Region::shared(4096)?)
            } else {
                None
            };
            // A fresh page is zero and must stay untouched until the pair's
            // first CPU writes it; only the reused line is reset here.
            let line = fresh.as_ref().unwrap_or(&common);
            if fresh.is_none() {
                line.u64_at(0).store(0, Ordering::Relaxed);
            }
            // The ready count lives in the common page, on its own line: the
            // partner counts itself in without touching a fresh page first.
            let ready = common.u64_at(64);
            ready.store(0, Ordering::Relaxed);
            let (rounds, batches) = (self.cfg.rounds, self.cfg.batches);
            let first_touch = self.cfg.fresh_line;
            let outcome = exec::run_tasks(Mode::Thread, &[Some(p.a), Some(p.b)], |task| {
                if task.index == 0 && first_touch {
                    // First touch of the fresh page happens here, on the pair's first CPU.
                    line.u64_at(0).store(0, Ordering::Relaxed);
                }
                ready.fetch_add(1, Ordering::AcqRel);
                task.wait_start();
                let mut r = TaskReport::default();
                if ready.load(Ordering::Acquire) != 2 {
                    r.fail("the partner task did not start (pinning failed?)");
                    return r;
                }
                ping_pong(task.index, line.u64_at(0), variant, rounds, batches, &mut r);
                r
            })?;
            let r = &outcome.reports;
            exec::first_error(r).map_err(|e| Error::Failed(format!("pair {}-{} {e}", p.a, p.b)))?;
            let final_value = line.u64_at(0).load(Ordering::Acquire);
            if final_value != 2 * rounds * batches {
                return Err(Error::Failed(format!(
                    "pair {}-{}: the line ended at {final_value}, expected {} hand-offs",
                    p.a,
                    p.b,
                    2 * rounds * batches
                )));
            }
            let median = r[0].values[V::Median];
            medians.push(median);
            d.figures.insert(p.figure(), median);
            d.tasks.push(super::task_row([
                ("a", p.a as f64),
                ("b", p.b as f64),
                ("median ns", median),
                ("min ns", r[0].values[V::Min]),
                ("hand-offs", final_value as f64),
            ]));
        }
        d.figures
            .insert("median ns".into(), crate::stats::summary::median(&medians));
        d.figures.insert("clock res ns".into(), res);
        d.figures.insert("clock read ns".into(), read);
        Ok(d)
    }
}

task_values! {
    /// What each task reports in its values.
    enum V {
        Median,
        Min,
    }
}

/// Task 0 serves odd values and times the batches; task 1 answers with the
/// next even value. Each round trip is two hand-offs of the line.
fn ping_pong(
    index: usize,
    v: &AtomicU64,
    variant: Variant,
    rounds: u64,
    batches: u64,
    r: &mut TaskReport,
) {
    let mut per = Vec::with_capacity(batches as usize);
    r.start_ns = clock::monotonic_ns();
    for b in 0..batches {
        let t0 = clock::monotonic_ns();
        for i in 0..rounds {
            let n = 2 * (b * rounds + i);
            let (from, to) = if index == 0 {
                (n, n + 1)
            } else {
                (n + 1, n + 2)
            };
            if variant == Variant::Cas {
                while v
                    .compare_exchange(from, to, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
                {
                    std::hint::spin_loop();
                }
            } else if variant == Variant::CasNopause {
                while v
                    .compare_exchange(from, to, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
                {}
            } else {
                while v.load(Ordering::Acquire) != from {
                    std::hint::spin_loop();
                }
                v.store(to, Ordering::Release);
            }
        }
        if index == 0 {
            // Wait for the last answer so the batch holds whole round trips.
            let last = 2 * (b + 1) * rounds;
            while v.load(Ordering::Acquire) != last {
                std::hint::spin_loop();
            }
            per.push((clock::monotonic_ns() - t0) as f64 / (2 * rounds) as f64);
        }
    }
    r.end_ns = clock::monotonic_ns();
    if index == 0 {
        r.values[V::Median] = crate::stats::summary::median(&per);
        r.values[V::Min] = per.iter().copied().fold(f64::INFINITY, f64::min);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::assert_input;
    use crate::machine::Cpu;

    fn machine() -> Snapshot {
        // CPUs 0,1 siblings on node 0; 2 on node 1.
        let cpu = |id, node, siblings: Vec<usize>| Cpu {
            id,
            package: Some(node),
            core: Some(id / 2),
            node: Some(node),
            siblings,
            die: None,
            cluster: None,
        };
        Snapshot {
            cpus: vec![
                cpu(0, 0, vec![0, 1]),
                cpu(1, 0, vec![0, 1]),
                cpu(2, 1, vec![2]),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn pairs_are_labelled_from_topology() {
        let (p, _) = pairs(&[0, 1, 2], &machine(), None);
        assert_eq!(p.len(), 3);
        assert!(p[0].smt && !p[0].cross_node);
        assert!(!p[1].smt && p[1].cross_node);
    }

    #[test]
    fn bad_input_is_refused() {
        let m = machine();
        let v = vec![Variant::Cas];
        assert_input(plan(Some(vec![0]), v.clone(), false, 1, 1, None, &m));
        assert_input(plan(Some(vec![0, 7]), v.clone(), false, 1, 1, None, &m));
        assert_input(plan(None, vec![], false, 1, 1, None, &m));
        assert_input(plan(None, v.clone(), false, 0, 1, None, &m));
        assert_input(plan(None, v.clone(), false, 1, 1, Some("0"), &m));
        assert_input(plan(None, v, false, 1, 1, Some("some"), &m));
    }

    #[test]
    fn variants_read_back_by_name_and_an_unknown_one_is_bad_input() {
        for v in [Variant::Cas, Variant::CasNopause, Variant::Storeload] {
            assert_eq!(v.name().parse::<Variant>().unwrap(), v);
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json, v.name());
        }
        assert_input("xchg".parse::<Variant>());
        assert_input("StoreLoad".parse::<Variant>());
    }
}
