//! Statistics over samples: summaries now; comparison and model fits join
//! as their own modules.

pub mod colour;
pub mod stopping;
pub mod summary;
pub mod usl;
