//! latency (seed 002): dependent-load latency by working-set size. The
//! working set is a chain of nodes one cache line each, linked in one random
//! cycle (the nodes shuffled, each linked to the next) so every load depends on the last and the
//! prefetchers cannot guess the next. Run on base pages and on THP, so the
//! TLB's share of the latency shows as the difference.

use super::spec::{higher, lower};
use super::stored::{Text, view_struct};
use serde::{Deserialize, Serialize};

use super::region::{Pages, Region};
use super::{Case, Measure, SampleData, Workload};
use crate::exec::{self, Mode, TaskReport, clock, pin::Pin};
use crate::machine::Snapshot;

use super::options::{line_size, name};
use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};
use crate::parse;

/// latency in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "latency",
    about: "Dependent-load latency by working-set size, base pages and THP",
    examples: "Examples:\n  vmscale run latency\n  \
vmscale run latency --max 256M --pages base,thp\n  \
vmscale run latency --min 16K --max 4M --pages base --pin 1",
    figures: &[lower("ns/load", "ns"), higher("huge %", "%")],
    report: super::Report::Latency,
    plots: super::Plots::Latency,
    size_flags: "a smaller --max",
    quick,
    ..Spec::of::<Args>()
};

/// The pages under the chain (`--pages`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PageKind {
    /// Base pages
    Base,
    /// Transparent huge pages (PMD size)
    Thp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Working-set sizes in bytes, ascending.
    pub sizes: Vec<u64>,
    pub pages: Vec<PageKind>,
    /// The least number of timed loads per sample (at least two laps are done).
    pub loads: u64,
    pub pin: Pin,
    pub line_size: u64,
    pub thp_size: u64,
    /// Twice the LLC, where the default `--max` was cut below it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cut_from: Option<u64>,
}

/// The default `--max`: twice the LLC (32 MiB assumed when sysfs does not
/// say), rounded up to a power of two, halved while a default run of the
/// sizes up to it (`planned_s`: the least samples of every case, by the
/// plan's estimate) would not fit `--max-time`'s default; and twice the
/// LLC where that cut it. The largest sizes cost most: a sample of 1 GiB
/// takes about 15 s here, and a default run up to it took 179 s.
pub fn default_max(
    llc: Option<u64>,
    min: u64,
    planned_s: impl Fn(u64) -> f64,
) -> (u64, Option<u64>) {
    let twice = (2 * llc.unwrap_or(32 << 20)).next_power_of_two();
    let budget = crate::stats::stopping::default_max_time().as_secs_f64();
    let mut max = twice;
    while max / 2 >= min && planned_s(max) > budget {
        max /= 2;
    }
    (max, (max < twice).then_some(twice))
}

/// One sample's planned seconds for a chain of `size` bytes of `line`-byte
/// nodes, at least `loads` timed loads.
fn sample_s_of(size: u64, line: u64, loads: u64) -> f64 {
    use super::cost::{LOAD_S, SAMPLE_S, touch_s};
    let nodes = (size / line.max(1)) as f64;
    // At least two laps of the chain are timed, after one untimed lap and
    // the shuffle that links the nodes (a random access each).
    let timed = (loads as f64).max(2.0 * nodes);
    SAMPLE_S + touch_s(size) + (2.0 * nodes + timed) * LOAD_S
}

view_struct! {
    /// What the latency report prints of a stored run's configuration.
    pub struct Stored {
        pub line_size: Text,
        pub loads: Text,
    }
}

pub struct Latency {
    cfg: Config,
    machine: Snapshot,
}

/// Sizes from `min` to `max`, doubling (both rounded to whole lines).
pub fn doubling_sizes(min: u64, max: u64) -> Vec<u64> {
    // Zero would never double past `max`.
    std::iter::successors(Some(min).filter(|&m| m > 0), |s| s.checked_mul(2))
        .take_while(|&s| s <= max)
        .collect()
}

/// The case variant for a page kind and size: "base/65536".
pub fn variant(pages: &str, size: u64) -> String {
    format!("{pages}/{size}")
}

pub fn parse_variant(v: &str) -> Option<(&str, u64)> {
    let (p, s) = v.split_once('/')?;
    Some((p, s.parse().ok()?))
}

impl Latency {
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Latency> {
        if cfg.sizes.is_empty() {
            return Err(Error::Input(
                "no working-set sizes: --max must be at least --min".into(),
            ));
        }
        if let Some(s) = cfg.sizes.iter().find(|&&s| s < 2 * cfg.line_size) {
            return Err(Error::Input(format!(
                "a {s}-byte working set holds fewer than two {}-byte nodes: raise --min",
                cfg.line_size
            )));
        }
        if let Some(&s) = cfg
            .sizes
            .iter()
            .find(|&&s| s / cfg.line_size > u32::MAX as u64)
        {
            return Err(Error::Input(format!(
                "--max: the {} working set has more than 2^32 nodes of one cache line: \
                 lower --max below {}",
                crate::units::size(s),
                crate::units::size(s)
            )));
        }
        if cfg.pages.is_empty() {
            return Err(Error::Input("--pages needs base, thp or both".into()));
        }
        if cfg.pages.iter().all(|&p| p == PageKind::Thp)
            && cfg.sizes.iter().all(|&s| s < cfg.thp_size)
        {
            return Err(Error::Input(format!(
                "--pages thp needs a working set of at least one huge page ({}): \
                 raise --max",
                crate::units::size(cfg.thp_size)
            )));
        }
        if cfg.pages.contains(&PageKind::Thp) {
            match machine.thp_enabled.as_deref() {
                Some("always") | Some("madvise") => {}
                other => {
                    return Err(Error::Input(format!(
                        "--pages thp needs /sys/kernel/mm/transparent_hugepage/enabled set \
                         to always or madvise (it is {}): change it, or use --pages base",
                        other.unwrap_or("unknown")
                    )));
                }
            }
        }
        if cfg.loads == 0 {
            return Err(Error::Input("--loads must be at least 1".into()));
        }
        exec::pin::plan(&cfg.pin, 1, &machine)?;
        Ok(Latency { cfg, machine })
    }
}

impl Config {
    /// The working-set sizes run on `pages`: THP from the huge-page size
    /// up, since a smaller region cannot hold a huge page (its cases
    /// measured base pages again, huge % 0).
    fn sizes_of(&self, pages: PageKind) -> impl Iterator<Item = u64> + '_ {
        let least = match pages {
            PageKind::Thp => self.thp_size,
            PageKind::Base => 0,
        };
        self.sizes.iter().copied().filter(move |&s| s >= least)
    }

    /// The plan's seconds of one sample of every case.
    fn one_sample_of_each_s(&self) -> f64 {
        self.pages
            .iter()
            .flat_map(|&p| self.sizes_of(p))
            .map(|size| sample_s_of(size, self.line_size, self.loads))
            .sum()
    }
}

/// `run quick`: up to 2 MiB, with THP (2 MiB only) where the machine
/// allows it.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    let thp_ok = matches!(m.thp_enabled.as_deref(), Some("always") | Some("madvise"));
    let pages = if thp_ok { "base,thp" } else { "base" };
    vec![super::spec::args(&format!(
        "--max 2M --pages {pages} --loads 200000"
    ))]
}

// `vmscale run latency`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Smallest working set
    #[arg(long, default_value = "4K", value_name = "SIZE")]
    pub min: String,
    /// Largest working set (default: 2 x the last-level cache)
    #[arg(long, value_name = "SIZE")]
    pub max: Option<String>,
    /// Page kinds (comma-separated)
    #[arg(long, value_enum, value_delimiter = ',', default_value = "base,thp")]
    pub pages: Vec<PageKind>,
    /// Least timed loads per sample (at least two laps of the chain are timed)
    #[arg(long, default_value_t = 2_000_000)]
    pub loads: u64,
    /// Placement of the one task: compact, spread, none, or a CPU
    #[arg(long, default_value = "compact")]
    pub pin: Pin,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let min = parse::size_arg("--min", &a.min)?;
        let mut cfg = Config {
            sizes: Vec::new(),
            pages: a.pages.clone(),
            loads: a.loads,
            pin: a.pin.clone(),
            line_size: line_size(m),
            thp_size: m.thp_pmd_size.unwrap_or(2 << 20),
            max_cut_from: None,
        };
        let max = match &a.max {
            Some(t) => parse::size_arg("--max", t)?,
            None => {
                let least = (crate::stats::stopping::DEFAULT_WARMUP
                    + crate::stats::stopping::MIN_REPS) as f64;
                let planned_s = |max: u64| {
                    let sizes = doubling_sizes(min, max);
                    let up_to = Config {
                        sizes,
                        ..cfg.clone()
                    };
                    up_to.one_sample_of_each_s() * least
                };
                let (max, cut) = default_max(m.llc().and_then(|c| c.size_bytes), min, planned_s);
                cfg.max_cut_from = cut;
                max
            }
        };
        if max < min {
            return Err(Error::Input(format!(
                "--max {} is below --min {}: raise --max",
                crate::units::size(max),
                crate::units::size(min)
            )));
        }
        cfg.sizes = doubling_sizes(min, max);
        env.made(cfg, |cfg| Latency::new(cfg, m.clone()))
    }
}

impl Measure for Latency {
    fn sample_s(&self, case: &Case) -> f64 {
        let size = parse_variant(&case.variant).map_or(0, |(_, s)| s);
        sample_s_of(size, self.cfg.line_size, self.cfg.loads)
    }

    fn plan_notes(&self) -> Vec<String> {
        self.cfg
            .max_cut_from
            .map(|twice| {
                let max = self.cfg.sizes.last().copied().unwrap_or(0);
                format!(
                    "--max {} by default, not twice the LLC ({}): a default run \
                     would not fit --max-time; ask for it with --max {}",
                    crate::units::size(max),
                    crate::units::size(twice),
                    crate::units::size(twice).replace(' ', "").replace("iB", "")
                )
            })
            .into_iter()
            .collect()
    }

    fn cases(&self) -> Vec<Case> {
        let variants = self
            .cfg
            .pages
            .iter()
            .flat_map(|p| self.cfg.sizes_of(*p).map(move |s| variant(&name(p), s)));
        Case::grid(variants, &[1])
    }

    fn memory_need(&self) -> u64 {
        let most = self.cfg.sizes.iter().copied().max().unwrap_or(0);
        // The chain, its alignment slack, and chain_order's permutation and
        // successor table (4 bytes a node each).
        most + self.cfg.thp_size + most / self.cfg.line_size * 8
    }

    fn sample(&self, case: &Case) -> Result<SampleData> {
        let (pages, size) = parse_variant(&case.variant)
            .ok_or_else(|| Error::Failed(format!("bad latency case '{}'", case.variant)))?;
        let pages = if pages == "thp" {
            Pages::Huge
        } else {
            Pages::Base
        };
        let line = self.cfg.line_size as usize;
        let nodes = size as usize / line;
        let region = Region::private(nodes * line, pages, self.cfg.thp_size as usize)?;
        let loads = self.cfg.loads.max(2 * nodes as u64);
        let cpus = exec::pin::plan(&self.cfg.pin, 1, &self.machine)?;
        let outcome = exec::run_tasks(Mode::Thread, &cpus, |task| {
            let mut r = TaskReport::default();
            let next = chain_order(nodes, 0x5eed ^ size);
            let base = region.ptr();
            for (i, &n) in next.iter().enumerate() {
                // SAFETY: i and n are < nodes, so both nodes lie inside the
                // region; each node's first word holds the next node's address.
                unsafe {
                    (base.add(i * line) as *mut *const u8).write(base.add(n as usize * line))
                };
            }
            drop(next);
            task.wait_start();
            // One untimed lap brings the working set into the caches and TLB.
            let p = chase(base, nodes as u64);
            r.start_ns = clock::monotonic_ns();
            let p = chase(p, loads);
            r.end_ns = clock::monotonic_ns();
            r.values[0] = loads as f64;
            std::hint::black_box(p);
            r
        })?;
        let r = &outcome.reports[0];
        if let Some(e) = r.error() {
            return Err(Error::Failed(e));
        }
        let mut d = SampleData::default();
        let ns = (r.end_ns - r.start_ns) as f64;
        d.figures.insert("ns/load".into(), ns / r.values[0]);
        d.figures.insert("loads".into(), r.values[0]);
        d.figures.insert("nodes".into(), nodes as f64);
        if let Some(h) = region.huge_bytes() {
            d.figures
                .insert("huge %".into(), h as f64 / (nodes * line) as f64 * 100.0);
        }
        d.figures.insert("cpu".into(), r.cpu as f64);
        Ok(d)
    }
}

/// Follows the chain `steps` times from `p`; returns where it stopped.
fn chase(mut p: *const u8, steps: u64) -> *const u8 {
    for _ in 0..steps {
        // SAFETY: p always points at a node whose first word is the next
        // node's address, as written by the chain builder.
        p = unsafe { (p as *const *const u8).read_volatile() };
    }
    p
}

/// The successor of each node in one random cycle through all `n` nodes
/// (a shuffled order, each node linked to the next and the last to the
/// first): following it from any node visits every node exactly once
/// before coming back.
pub fn chain_order(n: usize, seed: u64) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..n as u32).collect();
    let mut state = seed | 1;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in (1..n).rev() {
        let j = (rand() % (i as u64 + 1)) as usize;
        perm.swap(i, j);
    }
    let mut next = vec![0u32; n];
    for i in 0..n {
        next[perm[i] as usize] = perm[(i + 1) % n];
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_is_one_cycle_through_every_node() {
        for (n, seed) in [(2, 1), (3, 7), (64, 99), (4096, 12345), (10_007, 3)] {
            let next = chain_order(n, seed);
            let mut seen = vec![false; n];
            let mut p = 0usize;
            for _ in 0..n {
                assert!(!seen[p], "node {p} visited twice (n={n})");
                seen[p] = true;
                p = next[p] as usize;
            }
            assert_eq!(p, 0, "the walk must close after n steps (n={n})");
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn the_default_max_is_twice_the_llc_halved_until_the_plan_fits() {
        const M: u64 = 1 << 20;
        // A plan of a second per MiB of the largest size: 40 MiB fit.
        let planned = |max: u64| (max / M) as f64;
        assert_eq!(default_max(Some(16 * M), 4096, planned), (32 * M, None));
        assert_eq!(default_max(None, 4096, planned), (32 * M, Some(64 * M)));
        assert_eq!(
            default_max(Some(260 * M), 4096, planned),
            (32 * M, Some(1024 * M))
        );
        // Never below --min, even when nothing fits.
        assert_eq!(
            default_max(Some(260 * M), 256 * M, planned),
            (256 * M, Some(1024 * M))
        );
        // A plan that always fits keeps twice the LLC.
        assert_eq!(default_max(Some(260 * M), 4096, |_| 0.0), (1024 * M, None));
    }

    #[test]
    fn sizes_double() {
        assert_eq!(doubling_sizes(4096, 32768), vec![4096, 8192, 16384, 32768]);
        assert_eq!(parse_variant(&variant("thp", 65536)), Some(("thp", 65536)));
    }
}
