//! `vmscale bisect`: which revision of a tree, or which kernel of an
//! ordered list, moved a figure. The search (`search`) and the verdict of
//! one step against the ends (`step`) are pure; the rest boots the
//! kernels through the guest's rounds and keeps every round in the store.

pub mod args;
pub mod boots;
pub mod entries;
pub mod flow;
pub mod search;
pub mod step;
pub mod stored;
