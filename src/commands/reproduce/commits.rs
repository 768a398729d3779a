//! The report's commits looked up in `--tree` before anything is built:
//! one the tree lacks is bad input, naming it and how to fetch it.

use std::path::Path;

use crate::error::{Error, Result};
use crate::kbuild::git;
use crate::reproduce::report::Commit;

/// Refuses commits `tree` lacks before anything is built.
pub fn check(tree: &Path, commits: &[&Commit]) -> Result<()> {
    let t = git::Tree::open(tree)?;
    for c in commits {
        let found = t
            .text(
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{}^{{commit}}", c.id),
                ],
                "look the report's commits up",
            )
            .is_ok_and(|s| !s.is_empty());
        if !found {
            return Err(Error::Input(format!(
                "the report's commit {} ({}) is not in --tree {}: `git fetch` the tree the \
                 report names (its `url:` / `branch:` lines) into it, or give --kernel BASE \
                 --kernel HEAD",
                c.id,
                c.subject.as_deref().unwrap_or("no subject"),
                tree.display()
            )));
        }
    }
    Ok(())
}
