//! Page-colour statistics over physical frame numbers (seed 003): colour
//! histograms, skew (CoV, chi-square against uniform), effective colours
//! exp(Shannon entropy), runs of physically consecutive frames and the
//! interleaving of tasks along physical memory. Pure functions on PFN lists.

use std::collections::BTreeMap;

use statrs::distribution::{ChiSquared, ContinuousCDF};

/// The colour histogram: count of frames with `pfn % colours == c`.
pub fn histogram(pfns: &[u64], colours: u64) -> Vec<u64> {
    let mut h = vec![0u64; colours.max(1) as usize];
    if colours.is_power_of_two() {
        let mask = colours - 1;
        for &p in pfns {
            h[(p & mask) as usize] += 1;
        }
    } else {
        for &p in pfns {
            h[(p % colours) as usize] += 1;
        }
    }
    h
}

/// How evenly one task's pages spread over the colours.
#[derive(Debug, Clone, PartialEq)]
pub struct ColourStats {
    pub pages: u64,
    pub colours: usize,
    pub min: u64,
    pub max: u64,
    /// Coefficient of variation of the per-colour counts (population sd / mean).
    pub cov: f64,
    /// Pearson's chi-square statistic against a uniform spread.
    pub chi2: f64,
    /// P(chi-square with colours-1 degrees of freedom >= chi2).
    pub p_value: f64,
    /// exp(Shannon entropy of the colour distribution).
    pub effective: f64,
    /// effective / colours: the share of the cache the pages can use.
    pub effective_fraction: f64,
}

/// Summarises a histogram; `None` for no colours or no pages.
pub fn summarise(counts: &[u64]) -> Option<ColourStats> {
    let k = counts.len();
    let pages: u64 = counts.iter().sum();
    if k == 0 || pages == 0 {
        return None;
    }
    let n = pages as f64;
    let mean = n / k as f64;
    let var = counts
        .iter()
        .map(|&c| (c as f64 - mean).powi(2))
        .sum::<f64>()
        / k as f64;
    let chi2 = counts
        .iter()
        .map(|&c| (c as f64 - mean).powi(2) / mean)
        .sum::<f64>();
    let p_value = if k < 2 {
        1.0
    } else {
        ChiSquared::new((k - 1) as f64)
            .map(|d| d.sf(chi2))
            .unwrap_or(f64::NAN)
    };
    let entropy = -counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            p * p.ln()
        })
        .sum::<f64>();
    let effective = entropy.exp();
    Some(ColourStats {
        pages,
        colours: k,
        min: counts.iter().copied().min().unwrap_or(0),
        max: counts.iter().copied().max().unwrap_or(0),
        cov: var.sqrt() / mean,
        chi2,
        p_value,
        effective,
        effective_fraction: effective / k as f64,
    })
}

/// Histogram (length -> number of runs) of runs of physically consecutive
/// frames in the order given (virtual order): a run goes on while each
/// frame is the previous one plus 1, or while each is the previous minus 1
/// (per-CPU lists hand out batches in either order).
pub fn run_lengths(pfns: &[u64]) -> BTreeMap<u64, u64> {
    let mut h = BTreeMap::new();
    if pfns.is_empty() {
        return h;
    }
    let mut len = 1u64;
    let mut dir = 0i8;
    for w in pfns.windows(2) {
        let step = if w[1] == w[0].wrapping_add(1) {
            1
        } else if w[1] == w[0].wrapping_sub(1) {
            -1
        } else {
            0
        };
        if step != 0 && (dir == 0 || dir == step) {
            dir = step;
            len += 1;
        } else {
            *h.entry(len).or_insert(0) += 1;
            // The frame that broke the run starts the next one.
            len = 1;
            dir = 0;
        }
    }
    *h.entry(len).or_insert(0) += 1;
    h
}

/// The mode of a run-length histogram weighted by pages (ties: the longer),
/// ignoring runs of one: the batch the allocator most often handed out.
pub fn typical_run(h: &BTreeMap<u64, u64>) -> Option<u64> {
    h.iter()
        .filter(|(len, _)| **len > 1)
        .max_by_key(|(len, n)| (**len * **n, **len))
        .map(|(len, _)| *len)
}

/// How the tasks' frames interleave along physical memory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Interleave {
    /// Pairs of frames, both owned by some task, whose PFNs differ by one.
    pub adjacent_pairs: u64,
    /// Of those, pairs whose owners differ.
    pub switches: u64,
    /// Frames found in more than one task's list (should be none).
    pub duplicates: u64,
    /// Per task: lengths of its runs of physically adjacent own frames, in PFN order.
    pub runs: Vec<BTreeMap<u64, u64>>,
}

impl Interleave {
    /// switches / adjacent pairs (0 when no frames are adjacent).
    pub fn switch_fraction(&self) -> f64 {
        if self.adjacent_pairs == 0 {
            0.0
        } else {
            self.switches as f64 / self.adjacent_pairs as f64
        }
    }
}

/// Walks every task's frames in PFN order.
pub fn interleave(tasks: &[&[u64]]) -> Interleave {
    let total: usize = tasks.iter().map(|t| t.len()).sum();
    let mut all: Vec<(u64, u32)> = Vec::with_capacity(total);
    for (i, t) in tasks.iter().enumerate() {
        all.extend(t.iter().map(|&p| (p, i as u32)));
    }
    all.sort_unstable();
    let mut out = Interleave {
        runs: vec![BTreeMap::new(); tasks.len()],
        ..Default::default()
    };
    if all.is_empty() {
        return out;
    }
    let mut run = 1u64;
    for w in all.windows(2) {
        let ((p0, t0), (p1, t1)) = (w[0], w[1]);
        if p1 == p0 {
            out.duplicates += 1;
        }
        let adjacent = p1 == p0 + 1;
        if adjacent {
            out.adjacent_pairs += 1;
            if t0 != t1 {
                out.switches += 1;
            }
        }
        if adjacent && t0 == t1 {
            run += 1;
        } else {
            *out.runs[t0 as usize].entry(run).or_insert(0) += 1;
            run = 1;
        }
    }
    let last = all[all.len() - 1].1 as usize;
    *out.runs[last].entry(run).or_insert(0) += 1;
    out
}

/// Everything measured of one task's frames.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskColours {
    pub llc: Vec<u64>,
    pub llc_stats: Option<ColourStats>,
    pub l2: Vec<u64>,
    pub l2_stats: Option<ColourStats>,
    /// Runs of physically consecutive frames in virtual order.
    pub runs: BTreeMap<u64, u64>,
}

/// The whole analysis of one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub tasks: Vec<TaskColours>,
    pub interleave: Interleave,
}

/// Analyses every task's frames (base pages, virtual order): colours at the
/// LLC (or `--colours`) and, if known, at the L2; runs; interleaving.
pub fn analyse(tasks: &[&[u64]], colours: u64, l2_colours: Option<u64>) -> Analysis {
    let per_task = tasks
        .iter()
        .map(|pfns| {
            let llc = histogram(pfns, colours);
            let l2 = l2_colours.map(|c| histogram(pfns, c)).unwrap_or_default();
            TaskColours {
                llc_stats: summarise(&llc),
                l2_stats: summarise(&l2),
                llc,
                l2,
                runs: run_lengths(pfns),
            }
        })
        .collect();
    Analysis {
        tasks: per_task,
        interleave: interleave(tasks),
    }
}

/// True when the kernel hid the frame numbers: some page is present but
/// every present entry carries PFN 0 (pagemap without CAP_SYS_ADMIN).
pub fn pfns_hidden(entries: &[u64]) -> bool {
    let present: Vec<u64> = entries
        .iter()
        .filter(|&&e| e & PAGEMAP_PRESENT != 0)
        .copied()
        .collect();
    !present.is_empty() && present.iter().all(|&e| e & PAGEMAP_PFN_MASK == 0)
}

/// /proc/PID/pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
pub const PAGEMAP_PRESENT: u64 = 1 << 63;
pub const PAGEMAP_SWAPPED: u64 = 1 << 62;
pub const PAGEMAP_PFN_MASK: u64 = (1 << 55) - 1;

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 003, Steiner's table: 16 colours, two threads.
    const STEINER_T0: [u64; 16] = [2, 2, 2, 2, 75, 75, 75, 75, 1, 1, 1, 1, 74, 74, 75, 76];
    const STEINER_T1: [u64; 16] = [74, 74, 74, 74, 1, 1, 1, 1, 75, 76, 76, 76, 2, 2, 2, 2];

    #[test]
    fn uniform_spread_uses_every_colour() {
        let pfns: Vec<u64> = (1000..1000 + 16 * 100).collect();
        let h = histogram(&pfns, 16);
        assert!(h.iter().all(|&c| c == 100));
        let s = summarise(&h).unwrap();
        assert!((s.effective_fraction - 1.0).abs() < 1e-12);
        assert_eq!(s.chi2, 0.0);
        assert!((s.p_value - 1.0).abs() < 1e-9);
        assert_eq!(s.cov, 0.0);
    }

    #[test]
    fn steiner_rows_use_about_half_the_cache() {
        for row in [STEINER_T0, STEINER_T1] {
            let s = summarise(&row).unwrap();
            assert!(
                (s.effective_fraction - 0.5).abs() < 0.06,
                "fraction {}",
                s.effective_fraction
            );
            assert!(
                s.p_value < 1e-10,
                "skew must be significant: p {}",
                s.p_value
            );
            assert!(s.cov > 0.9);
        }
    }

    #[test]
    fn steiner_pattern_rebuilt_from_frames() {
        // Two threads taking alternate batches of 4 frames, as in seed 003.
        let (mut t0, mut t1) = (Vec::new(), Vec::new());
        for batch in 0..64u64 {
            let frames = (batch * 4..batch * 4 + 4).rev();
            if batch % 2 == 0 {
                t0.extend(frames)
            } else {
                t1.extend(frames)
            }
        }
        for t in [&t0, &t1] {
            let s = summarise(&histogram(t, 16)).unwrap();
            assert!((s.effective_fraction - 0.5).abs() < 1e-9);
            assert_eq!(run_lengths(t), BTreeMap::from([(4, 32)]));
        }
        let il = interleave(&[&t0, &t1]);
        assert_eq!(il.adjacent_pairs, 255);
        assert_eq!(il.switches, 63);
        assert_eq!(il.runs[0], BTreeMap::from([(4, 32)]));
        assert_eq!(il.runs[1], BTreeMap::from([(4, 32)]));
        assert_eq!(il.duplicates, 0);
    }

    #[test]
    fn batch_runs_are_recovered() {
        // Batches of 7 ascending, then 3 descending, with gaps between.
        let mut pfns = Vec::new();
        for b in 0..10u64 {
            pfns.extend(b * 1000..b * 1000 + 7);
        }
        for b in 20..25u64 {
            pfns.extend((b * 1000..b * 1000 + 3).rev());
        }
        pfns.push(99_999);
        let h = run_lengths(&pfns);
        assert_eq!(h, BTreeMap::from([(1, 1), (3, 5), (7, 10)]));
        assert_eq!(typical_run(&h), Some(7));
        assert_eq!(h.iter().map(|(l, n)| l * n).sum::<u64>(), pfns.len() as u64);
    }

    #[test]
    fn direction_change_splits_runs() {
        // 5,6,7 then 6,5: an up-run of 3, then a down-run 6,5 of 2.
        let h = run_lengths(&[5, 6, 7, 6, 5]);
        assert_eq!(h, BTreeMap::from([(2, 1), (3, 1)]));
        assert!(run_lengths(&[]).is_empty());
        assert_eq!(run_lengths(&[42]), BTreeMap::from([(1, 1)]));
    }

    #[test]
    fn alternating_frames_switch_every_time() {
        let t0: Vec<u64> = (0..100).step_by(2).collect();
        let t1: Vec<u64> = (1..100).step_by(2).collect();
        let il = interleave(&[&t0, &t1]);
        assert_eq!(il.adjacent_pairs, 99);
        assert_eq!(il.switches, 99);
        assert_eq!(il.switch_fraction(), 1.0);
        assert_eq!(il.runs[0], BTreeMap::from([(1, 50)]));
    }

    #[test]
    fn hidden_pfns_are_detected() {
        let hidden = vec![PAGEMAP_PRESENT; 64];
        assert!(pfns_hidden(&hidden));
        let real: Vec<u64> = (1..65).map(|p| PAGEMAP_PRESENT | p).collect();
        assert!(!pfns_hidden(&real));
        // Nothing present says nothing about privilege.
        assert!(!pfns_hidden(&[0u64; 8]));
    }

    #[test]
    fn non_power_of_two_colours() {
        let h = histogram(&[0, 1, 2, 3, 4, 5, 6], 3);
        assert_eq!(h, vec![3, 2, 2]);
        assert!(summarise(&[]).is_none());
        assert!(summarise(&[0, 0]).is_none());
    }
}
