//! c2c's pairs at scale: every pair of the chosen CPUs falls in one
//! topology class (SMT siblings, a shared L3, the same node, or across
//! nodes by SLIT distance and package), and a default run measures a
//! seeded random sample of up to N pairs of each class instead of all n²/2
//! of them (130,816 pairs on 512 CPUs). A random sample keeps the class
//! median's order-statistic interval honest for the class's pairs.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::machine::Snapshot;
use crate::stats::rng::SplitMix64;

/// Pairs measured per class by default (a median's 95 % interval by order
/// statistics needs at least 6).
pub const DEFAULT_PER_CLASS: usize = 8;
/// Up to this many pairs in all, every pair is measured by default.
pub const ALL_BELOW: u64 = 120;
/// The seed of the pair sample (a fixed one: runs of one machine measure
/// the same pairs and can be compared pair by pair).
const SEED: u64 = 23;

/// How close two CPUs sit, closest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Class {
    /// Threads of one core.
    Smt,
    /// Cores sharing the last-level cache (one core complex).
    SameL3,
    /// One NUMA node (or, without nodes, one package), other L3.
    SameNode,
    /// Different nodes: the SLIT distance, and whether one package.
    CrossNode {
        distance: Option<u32>,
        same_package: bool,
    },
    /// Without node information: different packages.
    OtherPackage,
}

impl Class {
    /// The name the report prints (22 characters at most).
    pub fn label(&self) -> String {
        match self {
            Class::Smt => "SMT siblings".into(),
            Class::SameL3 => "same L3".into(),
            Class::SameNode => "same node".into(),
            Class::CrossNode {
                distance,
                same_package,
            } => {
                let d = distance.map(|d| format!(" d={d}")).unwrap_or_default();
                let p = if *same_package { "" } else { " x-pkg" };
                format!("cross-node{d}{p}")
            }
            Class::OtherPackage => "other package".into(),
        }
    }
}

/// What the classifier needs of each CPU, looked up once.
struct Where {
    siblings: Vec<usize>,
    node: Option<usize>,
    package: Option<usize>,
    llc: Option<usize>,
}

/// Classifies pairs of a machine's CPUs.
pub struct Classifier<'a> {
    m: &'a Snapshot,
    at: BTreeMap<usize, Where>,
    node_index: BTreeMap<usize, usize>,
}

impl<'a> Classifier<'a> {
    pub fn new(m: &'a Snapshot) -> Classifier<'a> {
        let llc_level = m.llc().map(|c| (c.level, c.kind.clone()));
        let mut llc_of: BTreeMap<usize, usize> = BTreeMap::new();
        if let Some((level, kind)) = &llc_level {
            let instances = m
                .caches
                .iter()
                .filter(|c| c.level == *level && &c.kind == kind);
            for (i, c) in instances.enumerate() {
                if finer_than_node(m, &c.shared_cpus) {
                    for &cpu in &c.shared_cpus {
                        llc_of.insert(cpu, i);
                    }
                }
            }
        }
        let at = m
            .cpus
            .iter()
            .map(|c| {
                let w = Where {
                    siblings: c.siblings.clone(),
                    node: c.node,
                    package: c.package,
                    llc: llc_of.get(&c.id).copied(),
                };
                (c.id, w)
            })
            .collect();
        let node_index = m.nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        Classifier { m, at, node_index }
    }

    /// The class of CPUs `a` and `b`.
    pub fn class(&self, a: usize, b: usize) -> Class {
        let (Some(x), Some(y)) = (self.at.get(&a), self.at.get(&b)) else {
            return Class::SameNode;
        };
        if x.siblings.contains(&b) {
            return Class::Smt;
        }
        let same_package = matches!((x.package, y.package), (Some(p), Some(q)) if p == q);
        match (x.node, y.node) {
            (Some(n), Some(o)) if n != o => Class::CrossNode {
                distance: self.distance(n, o),
                same_package,
            },
            (None, _) | (_, None) if !same_package && x.package.is_some() => Class::OtherPackage,
            _ if x.llc.is_some() && x.llc == y.llc => Class::SameL3,
            _ => Class::SameNode,
        }
    }

    fn distance(&self, n: usize, o: usize) -> Option<u32> {
        let i = *self.node_index.get(&n)?;
        let j = *self.node_index.get(&o)?;
        self.m.nodes.get(i)?.distances.get(j).copied()
    }
}

/// An L3 is a class of its own only where it is smaller than a node (a
/// core complex); one that spans its node or more says nothing the node
/// does not ("same node").
fn finer_than_node(m: &Snapshot, cpus: &[usize]) -> bool {
    let mut nodes = cpus.iter().map(|&c| m.node_of(c));
    let Some(Some(first)) = nodes.next() else {
        // No node facts to compare with: the L3 counts as a class of its own.
        return true;
    };
    if !nodes.all(|n| n == Some(first)) {
        return false;
    }
    m.nodes
        .iter()
        .find(|n| n.id == first)
        .is_some_and(|n| n.cpus.len() > cpus.len())
}

/// The pairs to measure and what they were chosen from.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    /// (a, b, class), a < b, in CPU order.
    pub pairs: Vec<(usize, usize, Class)>,
    /// Every pair of the CPUs.
    pub total: u64,
    /// Every class seen with its count of pairs.
    pub classes: BTreeMap<Class, u64>,
}

/// The pairs of `cpus` (sorted, distinct) to measure: all of them with
/// `per_class` None, else a seeded random sample of up to `per_class` of
/// every class.
pub fn choose(cpus: &[usize], m: &Snapshot, per_class: Option<usize>) -> Chosen {
    let cl = Classifier::new(m);
    let mut by_class: BTreeMap<Class, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, &a) in cpus.iter().enumerate() {
        for &b in &cpus[i + 1..] {
            by_class.entry(cl.class(a, b)).or_default().push((a, b));
        }
    }
    let classes: BTreeMap<Class, u64> =
        by_class.iter().map(|(c, v)| (*c, v.len() as u64)).collect();
    let total = classes.values().sum();
    let mut rng = SplitMix64::new(SEED);
    let mut pairs = Vec::new();
    for (class, mut v) in by_class {
        let take = per_class.map_or(v.len(), |k| k.min(v.len()));
        // A partial Fisher-Yates shuffle draws `take` without replacement.
        for i in 0..take {
            let j = i + rng.below(v.len() - i);
            v.swap(i, j);
        }
        pairs.extend(v[..take].iter().map(|&(a, b)| (a, b, class)));
    }
    pairs.sort_unstable_by_key(|&(a, b, _)| (a, b));
    Chosen {
        pairs,
        total,
        classes,
    }
}

/// `--pairs`: `all`, or pairs per class; the default measures all pairs
/// of a small set of CPUs and samples a big one.
pub fn per_class(text: Option<&str>, cpus: usize) -> Result<Option<usize>> {
    let total = (cpus as u64) * (cpus as u64).saturating_sub(1) / 2;
    match text.map(str::trim) {
        None if total <= ALL_BELOW => Ok(None),
        None => Ok(Some(DEFAULT_PER_CLASS)),
        Some("all") => Ok(None),
        Some(t) => match t.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(Error::Input(format!(
                "--pairs '{t}' is not a count: use a number of pairs per topology class \
                 (1 or more; {DEFAULT_PER_CLASS} by default) or all"
            ))),
        },
    }
}
