//! Reading folded stacks: the share of each kernel function (self: it was
//! the sampled leaf; total: it was anywhere on the stack) and the shift of
//! those shares between two profiles, as `perf report` and `perf diff` do.

use std::collections::{BTreeMap, BTreeSet};

use super::symbols::KERNEL_MARK;

/// One kernel function's samples in a profile.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Share {
    pub name: String,
    /// Samples with this function as the innermost kernel frame.
    pub self_samples: u64,
    /// Samples with this function anywhere on the kernel stack.
    pub total_samples: u64,
}

/// Every kernel function of `folded` with its self and total samples,
/// most self samples first (ties by total, then name); and the profile's
/// total sample count.
pub fn kernel_shares(folded: &BTreeMap<String, u64>) -> (u64, Vec<Share>) {
    let mut by: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut total = 0;
    for (stack, &n) in folded {
        total += n;
        let kernel: Vec<&str> = stack
            .split(';')
            .filter_map(|f| f.strip_suffix(KERNEL_MARK))
            .collect();
        if let Some(leaf) = kernel.last() {
            by.entry(leaf).or_default().0 += n;
        }
        let distinct: BTreeSet<&str> = kernel.into_iter().collect();
        for f in distinct {
            by.entry(f).or_default().1 += n;
        }
    }
    let mut v: Vec<Share> = by
        .into_iter()
        .map(|(name, (s, t))| Share {
            name: name.to_string(),
            self_samples: s,
            total_samples: t,
        })
        .collect();
    v.sort_by(|a, b| {
        b.self_samples
            .cmp(&a.self_samples)
            .then(b.total_samples.cmp(&a.total_samples))
            .then(a.name.cmp(&b.name))
    });
    (total, v)
}

/// A function's self share in a baseline and another profile.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shift {
    pub name: String,
    pub base_samples: u64,
    pub base_share: f64,
    pub other_samples: u64,
    pub other_share: f64,
}

impl Shift {
    /// The change in percentage points (other minus baseline).
    pub fn delta_points(&self) -> f64 {
        (self.other_share - self.base_share) * 100.0
    }
}

/// Kernel functions by how much their self share moved from `base` to
/// `other`, largest move first.
pub fn shifts(base: &BTreeMap<String, u64>, other: &BTreeMap<String, u64>) -> Vec<Shift> {
    let (bt, b) = kernel_shares(base);
    let (ot, o) = kernel_shares(other);
    let frac = |n: u64, t: u64| if t == 0 { 0.0 } else { n as f64 / t as f64 };
    let mut names: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for s in &b {
        names.entry(s.name.clone()).or_default().0 = s.self_samples;
    }
    for s in &o {
        names.entry(s.name.clone()).or_default().1 = s.self_samples;
    }
    let mut v: Vec<Shift> = names
        .into_iter()
        .filter(|(_, (x, y))| x + y > 0)
        .map(|(name, (x, y))| Shift {
            name,
            base_samples: x,
            base_share: frac(x, bt),
            other_samples: y,
            other_share: frac(y, ot),
        })
        .collect();
    v.sort_by(|a, b| {
        b.delta_points()
            .abs()
            .total_cmp(&a.delta_points().abs())
            .then(a.name.cmp(&b.name))
    });
    v
}

/// Folded stacks from `(stack, count)` pairs, for tests.
#[cfg(test)]
pub fn of(lines: &[(&str, u64)]) -> BTreeMap<String, u64> {
    lines.iter().map(|(s, n)| (s.to_string(), *n)).collect()
}

#[cfg(test)]
mod tests {
    use super::of as folded;
    use super::*;

    #[test]
    fn self_is_the_kernel_leaf_and_total_counts_each_stack_once() {
        let f = folded(&[
            ("main;fault_[k];handle_mm_fault_[k];clear_page_[k]", 6),
            ("main;fault_[k];handle_mm_fault_[k]", 2),
            ("main;rec_[k];rec_[k]", 1),
            ("main", 1),
        ]);
        let (total, v) = kernel_shares(&f);
        assert_eq!(total, 10);
        let get = |n: &str| v.iter().find(|s| s.name == n).unwrap().clone();
        assert_eq!(v[0].name, "clear_page");
        assert_eq!(
            (
                get("clear_page").self_samples,
                get("clear_page").total_samples
            ),
            (6, 6)
        );
        assert_eq!(
            (
                get("handle_mm_fault").self_samples,
                get("handle_mm_fault").total_samples
            ),
            (2, 8)
        );
        assert_eq!(
            (get("fault").self_samples, get("fault").total_samples),
            (0, 8)
        );
        assert_eq!(get("rec").total_samples, 1);
        assert!(
            v.iter().all(|s| s.name != "main"),
            "user frames are not kernel functions"
        );
    }

    #[test]
    fn shifts_rank_the_largest_move_first() {
        let a = folded(&[("x_[k]", 50), ("y_[k]", 50)]);
        let b = folded(&[("x_[k]", 10), ("y_[k]", 60), ("z_[k]", 30)]);
        let s = shifts(&a, &b);
        assert_eq!(s[0].name, "x");
        assert!((s[0].delta_points() + 40.0).abs() < 1e-9);
        assert_eq!((s[0].base_samples, s[0].other_samples), (50, 10));
        assert_eq!(s[1].name, "z");
        assert_eq!(s[2].name, "y");
    }
}
