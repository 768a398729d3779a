//! The search of a bisection, apart from any measurement: an ordered list
//! of revisions or kernels, the first good and the last bad, each tested
//! one marked good, bad or skipped, and which to test next. As `git
//! bisect`: the middle of the range still in doubt; a skipped one is
//! passed over for its nearest untested neighbour; when only skipped ones
//! are left between the last good and the first bad, the answer is that
//! set (the first bad could be any of them).

/// What a test of one entry said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mark {
    Good,
    Bad,
    /// Neither could be told (the entry is passed over).
    Skip,
}

impl Mark {
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Good => "good",
            Mark::Bad => "bad",
            Mark::Skip => "skip",
        }
    }
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Test this entry.
    Test(usize),
    /// The first bad entry; the entry before it is good.
    Found(usize),
    /// Only skipped entries are left between the last good and the first
    /// bad: the first bad is one of these (the skipped ones, then the
    /// first bad).
    Ambiguous(Vec<usize>),
}

/// A bisection over `n` entries: 0 is good, n − 1 is bad.
#[derive(Debug, Clone)]
pub struct Search {
    marks: Vec<Option<Mark>>,
}

impl Search {
    /// A search over `n` entries (at least two: the good and the bad end).
    pub fn new(n: usize) -> Option<Search> {
        if n < 2 {
            return None;
        }
        let mut marks = vec![None; n];
        marks[0] = Some(Mark::Good);
        marks[n - 1] = Some(Mark::Bad);
        Some(Search { marks })
    }

    pub fn len(&self) -> usize {
        self.marks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Records entry `i`'s test (the ends keep their marks).
    pub fn mark(&mut self, i: usize, m: Mark) {
        if i > 0 && i + 1 < self.marks.len() {
            self.marks[i] = Some(m);
        }
    }

    pub fn marked(&self, i: usize) -> Option<Mark> {
        self.marks.get(i).copied().flatten()
    }

    /// The last good entry before the first bad one, and the first bad.
    pub fn bounds(&self) -> (usize, usize) {
        let hi = (0..self.marks.len())
            .find(|&i| self.marks[i] == Some(Mark::Bad))
            .unwrap_or(self.marks.len() - 1);
        let lo = (0..hi)
            .rev()
            .find(|&i| self.marks[i] == Some(Mark::Good))
            .unwrap_or(0);
        (lo, hi)
    }

    /// The entry to test next, or the answer.
    pub fn next(&self) -> Next {
        let (lo, hi) = self.bounds();
        let mid = (lo + hi) / 2;
        let open = (lo + 1..hi)
            .filter(|&i| self.marks[i].is_none())
            .min_by_key(|&i| (i.abs_diff(mid), i));
        match open {
            Some(i) => Next::Test(i),
            None if hi == lo + 1 => Next::Found(hi),
            None => Next::Ambiguous((lo + 1..=hi).collect()),
        }
    }
}

/// The most tests a bisection of `n` entries without skips needs:
/// ⌈log2 (n − 1)⌉ (each halves the range still in doubt).
pub fn most_steps(n: usize) -> usize {
    let range = n.saturating_sub(1).max(1);
    (usize::BITS - (range - 1).leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    /// Bisects `n` entries whose first bad is `planted`, with `judge`
    /// marking each tested entry; gives the answer and the tests made.
    fn bisect(
        n: usize,
        planted: usize,
        judge: &mut dyn FnMut(usize, bool) -> Mark,
    ) -> (Next, Vec<usize>) {
        let mut s = Search::new(n).unwrap();
        let mut tested = Vec::new();
        loop {
            match s.next() {
                Next::Test(i) => {
                    assert!(!tested.contains(&i), "entry {i} tested twice");
                    tested.push(i);
                    s.mark(i, judge(i, i >= planted));
                }
                end => return (end, tested),
            }
        }
    }

    #[test]
    fn finds_every_planted_entry_within_log2_steps() {
        for n in 2..=40 {
            for planted in 1..n {
                let (end, tested) = bisect(n, planted, &mut |_, bad| {
                    if bad { Mark::Bad } else { Mark::Good }
                });
                assert_eq!(end, Next::Found(planted), "n {n} planted {planted}");
                assert!(
                    tested.len() <= most_steps(n),
                    "n {n} planted {planted}: {} tests, at most {}",
                    tested.len(),
                    most_steps(n)
                );
            }
        }
        assert_eq!(most_steps(9), 3);
        assert_eq!(most_steps(2), 0);
        assert_eq!(most_steps(10), 4);
    }

    #[test]
    fn skipped_entries_are_passed_over_and_named_when_they_hide_the_answer() {
        let mut rng = SplitMix64::new(31);
        for trial in 0..500 {
            let n = 3 + rng.below(30);
            let planted = 1 + rng.below(n - 1);
            // Each entry is skippable with probability 1/3, fixed per entry
            // as a build that fails would be.
            let skippy: Vec<bool> = (0..n).map(|_| rng.below(3) == 0).collect();
            let (end, tested) = bisect(n, planted, &mut |i, bad| match (skippy[i], bad) {
                (true, _) => Mark::Skip,
                (false, true) => Mark::Bad,
                (false, false) => Mark::Good,
            });
            match end {
                Next::Found(i) => {
                    assert_eq!(i, planted, "trial {trial}");
                    // Found only when the entry before it is known good.
                    assert!(i == 1 || (!skippy[i - 1] && tested.contains(&(i - 1))));
                }
                Next::Ambiguous(set) => {
                    assert!(set.contains(&planted), "trial {trial}: {set:?} {planted}");
                    let last = *set.last().unwrap();
                    assert!(set[..set.len() - 1].iter().all(|&i| skippy[i]));
                    assert!(last == n - 1 || !skippy[last]);
                }
                Next::Test(_) => unreachable!(),
            }
        }
    }

    #[test]
    fn the_ends_keep_their_marks_and_a_search_needs_two_entries() {
        assert!(Search::new(1).is_none());
        let mut s = Search::new(2).unwrap();
        s.mark(0, Mark::Bad);
        s.mark(1, Mark::Good);
        assert_eq!(s.next(), Next::Found(1));
        let mut s = Search::new(5).unwrap();
        assert_eq!(s.next(), Next::Test(2));
        s.mark(2, Mark::Skip);
        // The nearest untested neighbour, the lower one first.
        assert_eq!(s.next(), Next::Test(1));
        s.mark(1, Mark::Good);
        assert_eq!(s.next(), Next::Test(3));
        s.mark(3, Mark::Bad);
        assert_eq!(s.next(), Next::Ambiguous(vec![2, 3]));
        assert_eq!(s.bounds(), (1, 3));
    }
}
