//! Statistics over samples: summaries now; comparison and model fits join
//! as their own modules.

pub mod summary;
pub mod colour;
