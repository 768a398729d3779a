//! Statistics over samples: summaries, and the comparison tests (Welch,
//! Benjamini-Hochberg, bootstrap); model fits join as their own modules.

pub mod colour;
pub mod compare;
pub mod stopping;
pub mod summary;
pub mod usl;
