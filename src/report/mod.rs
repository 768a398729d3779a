//! Plain-text renderings of vmscale's data, fit for an 80-column mail.

pub mod sysinfo;
