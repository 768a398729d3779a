//! The user's tree as git sees it: revisions resolved to commit ids (or,
//! for the working tree, to a tree id that hashes its content), and each
//! one exported into a source directory of the cache. The user's checkout,
//! index and refs are never written: the export uses an index file of the
//! cache's own, and the working tree's content is hashed into an object
//! directory of the cache's own that borrows the repository's objects.
//! `read-tree -u` rewrites only the files that differ from the last
//! export, so make sees only those as changed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::machine::guest::GuestRevision;

/// `--rev WORKTREE`: the working tree itself, committed or not.
pub const WORKTREE: &str = "WORKTREE";

/// A tree (`--tree DIR`): its directory and its git directory.
#[derive(Debug, Clone)]
pub struct Tree {
    pub dir: PathBuf,
    pub git_dir: PathBuf,
}

/// One revision to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rev {
    /// As given to `--rev`.
    pub given: String,
    /// What is exported: a commit id, or the working tree's tree id.
    pub id: String,
    /// True for `WORKTREE`.
    pub worktree: bool,
    pub revision: GuestRevision,
}

impl Rev {
    /// The default label: the short commit id (`+` and the short tree id
    /// for a working tree that differs from HEAD).
    pub fn label(&self) -> String {
        let commit = short(&self.revision.commit);
        if self.worktree && self.revision.describe.ends_with("-dirty") {
            format!("{commit}+{}", short(&self.id))
        } else {
            commit.to_string()
        }
    }
}

/// The first 12 characters of an id.
pub fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// A git command in `tree` that runs no hook, no fsmonitor and no pager.
fn git(tree: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(tree)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(["--no-pager"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .stdin(Stdio::null());
    c
}

/// Why a git command gave no answer. Its message is complete; callers
/// put it after what they were doing, and a failed run (exit 1) unless
/// they know it was the user's input.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git itself could not be started.
    #[error("cannot run git to {what} ({source}); install git")]
    NotRun {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// git ran and failed: the last line of its stderr.
    #[error("{0}")]
    Said(String),
}

impl From<GitError> for Error {
    fn from(e: GitError) -> Error {
        Error::Failed(e.to_string())
    }
}

/// Runs a git command; its stdout trimmed, or its stderr as the error.
fn run(mut c: Command, what: &str) -> Result<String, GitError> {
    let out = c.output().map_err(|source| GitError::NotRun {
        what: what.to_string(),
        source,
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(GitError::Said(
            err.trim().lines().last().unwrap_or("").to_string(),
        ))
    }
}

impl Tree {
    /// Opens `--tree DIR`: a git repository with a working tree.
    pub fn open(dir: &Path) -> Result<Tree> {
        if !dir.is_dir() {
            return Err(Error::Input(format!(
                "--tree {}: not a directory; give a kernel source tree under git",
                dir.display()
            )));
        }
        let mut c = git(dir);
        c.args(["rev-parse", "--absolute-git-dir", "--show-toplevel"]);
        let out = run(c, "read the tree").map_err(|e| {
            Error::Input(format!(
                "--tree {}: not a git repository ({e}); give a kernel source tree under git",
                dir.display()
            ))
        })?;
        let mut lines = out.lines();
        let (Some(git_dir), Some(top)) = (lines.next(), lines.next()) else {
            return Err(Error::Input(format!(
                "--tree {}: a bare repository; give a checkout",
                dir.display()
            )));
        };
        let top = PathBuf::from(top);
        if !top.join("Makefile").is_file() || !top.join("arch/x86").is_dir() {
            return Err(Error::Input(format!(
                "--tree {}: no Makefile and arch/x86 at its top ({}): not a Linux tree",
                dir.display(),
                top.display()
            )));
        }
        Ok(Tree {
            dir: top,
            git_dir: PathBuf::from(git_dir),
        })
    }

    /// What `git ARGS` prints in the tree (trimmed); `what` names the
    /// job in the message if git cannot be run.
    pub fn text(&self, args: &[&str], what: &str) -> Result<String, GitError> {
        let mut c = git(&self.dir);
        c.args(args);
        run(c, what)
    }

    /// Resolves `--rev REV` (or `WORKTREE`, whose content is hashed with
    /// the help of `scratch`, a directory of the cache).
    pub fn resolve(&self, rev: &str, scratch: &Path) -> Result<Rev> {
        if rev == WORKTREE {
            return self.worktree(scratch);
        }
        if rev.starts_with('-') || rev.is_empty() {
            return Err(Error::Input(format!(
                "--rev {rev:?}: not a revision; give a commit, a branch, HEAD~1 or WORKTREE"
            )));
        }
        let commit = self
            .text(
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{rev}^{{commit}}"),
                ],
                "resolve a revision",
            )
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                Error::Input(format!(
                    "--rev {rev}: not a commit of {}; give a commit, a branch, HEAD~1 or \
                     WORKTREE",
                    self.dir.display()
                ))
            })?;
        Ok(Rev {
            given: rev.to_string(),
            id: commit.clone(),
            worktree: false,
            revision: self.describe(&commit, false),
        })
    }

    fn describe(&self, commit: &str, dirty: bool) -> GuestRevision {
        let subject = self
            .text(&["log", "-1", "--format=%s", commit], "read a subject")
            .unwrap_or_default();
        let mut describe = self
            .text(&["describe", "--always", "--tags", commit], "describe")
            .unwrap_or_else(|_| short(commit).to_string());
        if dirty {
            describe.push_str("-dirty");
        }
        GuestRevision {
            commit: commit.to_string(),
            subject,
            describe,
        }
    }

    /// Environment that keeps new objects in `scratch/objects`, borrowing
    /// the repository's, and uses the index file `index`.
    fn private(&self, c: &mut Command, scratch: &Path, index: &Path) {
        c.env("GIT_INDEX_FILE", index)
            .env("GIT_OBJECT_DIRECTORY", scratch.join("objects"))
            .env(
                "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                self.git_dir.join("objects"),
            );
    }

    /// The working tree as a tree object: the user's index copied, every
    /// file git does not ignore added to the copy, and the copy written.
    fn worktree(&self, scratch: &Path) -> Result<Rev> {
        let failed =
            |e: GitError| Error::Failed(format!("--rev WORKTREE of {}: {e}", self.dir.display()));
        std::fs::create_dir_all(scratch.join("objects"))
            .map_err(|e| Error::io("cannot create", scratch, e))?;
        let index = scratch.join("worktree-index");
        let _ = std::fs::remove_file(&index);
        // The copy keeps the index's file stamps, so only changed files are read.
        if let Ok(Some(mut from)) = crate::state_dir::open_read(&self.git_dir.join("index")) {
            let mut to = crate::state_dir::create_new(&index)?;
            std::io::copy(&mut from, &mut to).map_err(|e| Error::io("cannot copy", &index, e))?;
        }
        let mut add = git(&self.dir);
        add.args(["add", "--all", "--", "."]);
        self.private(&mut add, scratch, &index);
        run(add, "hash the working tree").map_err(failed)?;
        let mut write = git(&self.dir);
        write.arg("write-tree");
        self.private(&mut write, scratch, &index);
        let tree = run(write, "hash the working tree").map_err(failed)?;
        let head = self
            .text(&["rev-parse", "--verify", "HEAD^{commit}"], "read HEAD")
            .map_err(failed)?;
        let head_tree = self
            .text(&["rev-parse", "HEAD^{tree}"], "read HEAD")
            .map_err(failed)?;
        Ok(Rev {
            given: WORKTREE.to_string(),
            id: tree.clone(),
            worktree: true,
            revision: self.describe(&head, tree != head_tree),
        })
    }

    /// Makes `src` hold `rev`'s files: only files that differ from the
    /// last export into `src` (recorded in `index`) are written.
    pub fn export(&self, rev: &Rev, src: &Path, index: &Path, scratch: &Path) -> Result<()> {
        for d in [src.to_path_buf(), scratch.join("objects")] {
            std::fs::create_dir_all(&d).map_err(|e| Error::io("cannot create", &d, e))?;
        }
        let mut c = git(&self.dir);
        c.arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(src)
            .args(["read-tree", "--reset", "-u", &rev.id]);
        self.private(&mut c, scratch, index);
        run(c, "export the revision").map_err(|e| {
            Error::Failed(format!(
                "cannot export {} of {} into {}: {e}",
                rev.given,
                self.dir.display(),
                src.display()
            ))
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, script: &str) {
        let ok = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap()
            .success();
        assert!(ok, "{script}");
    }

    fn stamp(p: &Path) -> std::time::SystemTime {
        std::fs::metadata(p).unwrap().modified().unwrap()
    }

    #[test]
    fn revisions_export_without_touching_the_checkout() {
        let root = crate::scratch::at("");
        let t = root.join("tree");
        std::fs::create_dir_all(t.join("arch/x86")).unwrap();
        sh(
            &t,
            "git init -q . && echo all: > Makefile && echo a > arch/x86/a && echo b > b \
             && git add -A && git commit -qm one && echo b2 > b && git commit -qam 'two: b'",
        );
        let tree = Tree::open(&t).unwrap();
        let scratch = root.join("scratch");
        let (src, index) = (root.join("src"), scratch.join("index"));
        std::fs::create_dir_all(&scratch).unwrap();
        let one = tree.resolve("HEAD~1", &scratch).unwrap();
        let two = tree.resolve("HEAD", &scratch).unwrap();
        assert_eq!(two.revision.subject, "two: b");
        assert_eq!(two.label().len(), 12);
        tree.export(&one, &src, &index, &scratch).unwrap();
        assert_eq!(std::fs::read_to_string(src.join("b")).unwrap(), "b\n");
        let a_before = stamp(&src.join("arch/x86/a"));
        std::thread::sleep(std::time::Duration::from_millis(20));
        tree.export(&two, &src, &index, &scratch).unwrap();
        assert_eq!(std::fs::read_to_string(src.join("b")).unwrap(), "b2\n");
        // An unchanged file is not rewritten, so make does not rebuild it.
        assert_eq!(stamp(&src.join("arch/x86/a")), a_before);

        // The working tree, dirty: hashed without touching the user's index.
        std::fs::write(t.join("b"), "b3\n").unwrap();
        std::fs::write(t.join("new"), "n\n").unwrap();
        let status = || tree.text(&["status", "--porcelain"], "status").unwrap();
        let before = status();
        let wt = tree.resolve(WORKTREE, &scratch).unwrap();
        assert!(wt.worktree && wt.revision.describe.ends_with("-dirty"));
        assert_eq!(wt.revision.commit, two.id);
        assert!(wt.label().contains('+'), "{}", wt.label());
        assert_eq!(status(), before, "the user's index changed");
        tree.export(&wt, &src, &index, &scratch).unwrap();
        assert_eq!(std::fs::read_to_string(src.join("b")).unwrap(), "b3\n");
        assert!(src.join("new").is_file());
        // The same content hashes to the same id.
        assert_eq!(tree.resolve(WORKTREE, &scratch).unwrap().id, wt.id);

        assert!(tree.resolve("nope", &scratch).unwrap_err().is_input());
        assert!(tree.resolve("--all", &scratch).unwrap_err().is_input());
        assert!(Tree::open(&root.join("src")).unwrap_err().is_input());
    }
}
