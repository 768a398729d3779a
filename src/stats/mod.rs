//! Statistics over samples: summaries, and the comparison tests (Welch,
//! Benjamini-Hochberg, bootstrap); model fits join as their own modules.

pub mod compare;
pub mod summary;
