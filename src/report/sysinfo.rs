//! Placeholder, replaced by the machine branch.
use crate::machine::Snapshot;
pub fn text(s: &Snapshot) -> String {
    format!("{s:#?}\n")
}
