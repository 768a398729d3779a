//! Statistics over samples: summaries and the robust centre, the stopping
//! rule, mixtures and drifts, variance between invocations, the comparison
//! tests and intervals (Welch, Benjamini-Hochberg, ratio intervals, paired
//! A/B ratios) and the USL fit. Pure numbers, apart from `case_groups`,
//! which reads stored samples.

pub mod case_groups;
pub mod colour;
pub mod compare;
pub mod levels;
pub mod mixture;
pub mod paired;
pub mod rerun;
pub mod robust;
pub mod stopping;
pub mod summary;
pub mod usl;
