//! One case of a comparison's side as the analysis reads it: the stored
//! samples of a run, or the bare values of a plain sample file. A file
//! carries no per-sample records (times, vmstat, noise), so its ten million
//! values take 80 MB and are read in place, never copied into samples.

use std::borrow::Cow;

use super::case_groups::{self, CaseMixture};
use super::paired::Pairing;
use crate::model::GUEST_ROUND;
use crate::model::{Case, CaseSamples};

#[derive(Debug, Clone, Copy)]
pub enum CaseData<'a> {
    /// A stored case (warm-ups are left out wherever values are read).
    Stored(&'a CaseSamples),
    /// A sample file: `values` of `figure`, finite, value i taken i-th.
    Values {
        case: &'a Case,
        figure: &'a str,
        values: &'a [f64],
    },
}

impl<'a> CaseData<'a> {
    pub fn case(&self) -> &'a Case {
        match self {
            CaseData::Stored(c) => &c.case,
            CaseData::Values { case, .. } => case,
        }
    }

    /// The stored samples, for what only a measured run has (vmstat).
    pub fn stored(&self) -> Option<&'a CaseSamples> {
        match self {
            CaseData::Stored(c) => Some(c),
            CaseData::Values { .. } => None,
        }
    }

    /// Measured samples.
    pub fn count(&self) -> usize {
        match self {
            CaseData::Stored(c) => c.measured().count(),
            CaseData::Values { values, .. } => values.len(),
        }
    }

    /// The finite values of `figure` in sampling order (borrowed from a
    /// file, collected from stored samples).
    pub fn values(&self, figure: &str) -> Cow<'a, [f64]> {
        match *self {
            CaseData::Stored(c) => {
                super::work::pass(c.samples.len());
                Cow::Owned(c.values(figure).filter(|v| v.is_finite()).collect())
            }
            CaseData::Values {
                figure: f, values, ..
            } if f == figure => {
                super::work::pass(values.len());
                if values.iter().all(|v| v.is_finite()) {
                    Cow::Borrowed(values)
                } else {
                    Cow::Owned(values.iter().copied().filter(|v| v.is_finite()).collect())
                }
            }
            CaseData::Values { .. } => Cow::Borrowed(&[]),
        }
    }

    /// `figure`'s values tagged with the round they were taken in, as
    /// `pairing` defines rounds; `None` when the case has no rounds (a
    /// file, or a stored sample without its round).
    pub fn rounds(&self, figure: &str, pairing: Pairing) -> Option<Vec<(i64, f64)>> {
        let CaseData::Stored(c) = self else {
            return None;
        };
        let round = |s: &crate::model::Sample| match pairing {
            Pairing::None => None,
            Pairing::Seq => Some(s.seq),
            Pairing::Round => s.noise.get(GUEST_ROUND).map(|r| *r as i64),
        };
        super::work::pass(c.samples.len());
        let mut out = Vec::new();
        for s in c.measured() {
            let r = round(s)?;
            if let Some(v) = s.data.figures.get(figure) {
                out.push((r, *v));
            }
        }
        Some(out)
    }

    /// The case's mixture in `figure`, if its values (`values`, as
    /// `values(figure)` gave them, and their sorted copy) form two groups;
    /// `limit` bounds the list of what else differed.
    pub fn mixture(
        &self,
        figure: &str,
        values: &[f64],
        sorted: &[f64],
        limit: usize,
    ) -> Option<CaseMixture> {
        match *self {
            CaseData::Stored(c) => case_groups::find_sorted(c, figure, values, sorted, limit),
            CaseData::Values { .. } => case_groups::of_values(values, sorted, figure),
        }
    }
}
