//! What a bisection goes over, in order, first good and last bad: the
//! kernels given (`--kernel`, each resolved and named as `vmscale guest`
//! names it), or the revisions of a tree between `--good` and `--bad`
//! along the first-parent line (`git rev-list --first-parent
//! --ancestry-path`: a merge is one step, as `git bisect --first-parent`
//! takes it), built only when a step asks for one.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::guest::kernel::{self, Kernel};
use crate::kbuild::git::{Tree, short};

/// One entry of the list.
#[derive(Debug, Clone)]
pub struct Entry {
    /// As the user knows it: the `--kernel` path, or the commit id.
    pub name: String,
    /// The label of its runs: the kernel's default label, or the short
    /// commit id.
    pub label: String,
    /// A commit's subject.
    pub subject: Option<String>,
    /// A prebuilt kernel (None: a revision, built when first booted).
    pub kernel: Option<Kernel>,
}

/// The `--kernel` list, resolved.
pub fn kernels(paths: &[PathBuf], modules: Option<&Path>) -> Result<Vec<Entry>> {
    if paths.len() < 2 {
        return Err(Error::Input(format!(
            "{} --kernel: give the kernels in order, at least two, the first good and the \
             last bad",
            paths.len()
        )));
    }
    let kernels = paths
        .iter()
        .map(|k| kernel::resolve(k, modules))
        .collect::<Result<Vec<_>>>()?;
    for (i, k) in kernels.iter().enumerate() {
        if let Some(j) = kernels[..i].iter().position(|o| o.sha256 == k.sha256) {
            return Err(Error::Input(format!(
                "--kernel {} and --kernel {} are the same image: each entry of a bisection \
                 is a different kernel",
                paths[j].display(),
                paths[i].display()
            )));
        }
    }
    let labels = kernel::default_labels(&kernels);
    Ok(kernels
        .into_iter()
        .zip(labels)
        .zip(paths)
        .map(|((k, label), p)| Entry {
            name: p.display().to_string(),
            label,
            subject: None,
            kernel: Some(k),
        })
        .collect())
}

/// The revisions of `tree` from `good` to `bad`, both included.
pub fn revisions(tree: &Path, good: &str, bad: &str) -> Result<Vec<Entry>> {
    let t = Tree::open(tree)?;
    let resolve = |which: &str, rev: &str| -> Result<String> {
        if rev.starts_with('-') || rev == crate::kbuild::git::WORKTREE {
            return Err(Error::Input(format!(
                "--{which} {rev}: give a commit (an id, a branch, a tag, HEAD~3)"
            )));
        }
        t.text(
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
            "resolve",
        )
        .map(|s| s.trim().to_string())
        .map_err(|_| {
            Error::Input(format!(
                "--{which} {rev}: not a commit of {} (see `git log`)",
                t.dir.display()
            ))
        })
    };
    let (g, b) = (resolve("good", good)?, resolve("bad", bad)?);
    if g == b {
        return Err(Error::Input(format!(
            "--good {good} and --bad {bad} are the same commit {}: nothing between them",
            short(&g)
        )));
    }
    if t.text(&["merge-base", "--is-ancestor", &g, &b], "compare")
        .is_err()
    {
        return Err(Error::Input(format!(
            "--good {good} is not an ancestor of --bad {bad}: give an older good commit (or \
             swap them if the figure got better)"
        )));
    }
    let log = t
        .text(
            &[
                "log",
                "--first-parent",
                "--ancestry-path",
                "--reverse",
                "--format=%H%x09%s",
                &format!("{g}..{b}"),
            ],
            "list the revisions",
        )
        .map_err(|e| Error::Failed(format!("--tree {}: git log: {e}", tree.display())))?;
    let subject = |id: &str| {
        t.text(&["log", "-1", "--format=%s", id], "read the subject")
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let entry = |id: &str, subject: String| Entry {
        name: id.to_string(),
        label: short(id).to_string(),
        subject: Some(subject),
        kernel: None,
    };
    let mut out = vec![entry(&g, subject(&g))];
    for line in log.lines() {
        if let Some((id, s)) = line.split_once('\t') {
            out.push(entry(id, s.to_string()));
        }
    }
    if out.last().is_none_or(|e| e.name != b) {
        return Err(Error::Input(format!(
            "--bad {bad} is not on the first-parent line from --good {good}"
        )));
    }
    Ok(out)
}
