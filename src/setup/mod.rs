//! The set-up room memory-pressure cases need, made and undone by vmscale:
//! a page-cache file system (ext4 on a loop device whose sparse image lives
//! on a private tmpfs), a memory cgroup with a limit, a swap device (zram,
//! else a swap file), huge pages. Crash-safe as the knobs are: each
//! resource is written to a journal and fsynced before it is made
//! ([`journal`]), undone in reverse order by [`Setup::finish`] or drop, and
//! what a killed run left is undone by [`recover`] at the next start or by
//! `vmscale restore`. Everything lives in `<state>/setup/<id>/`, a 0700
//! directory of root's (docs/pressure-setup.md).
//!
//! Besides the agreed API (`Setup::new`, `page_cache_fs`, `memcg`, `swap`,
//! `hugetlb_pages`, `finish`, `Memcg`, `SwapInfo`, `recover`) there are:
//! [`check`] with [`Needs`], refusing a whole set-up before anything is
//! made; [`Setup::new_in`] and [`recover_in`] for a given state directory;
//! [`Setup::swap_file`], a swap file even where zram exists; and
//! [`Memcg::version`]: on hosts whose memory controller is bound to cgroup
//! v1 (hybrid mode) the cgroup is a v1 one with `memory.limit_in_bytes`,
//! and `stat`/`events` add the v2 names (see `memcg`).

pub mod journal;

mod hugetlb;
mod memcg;
mod pagecache_fs;
mod swap;
mod sys;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::state_dir as state;
use journal::{Journal, Step};

pub use hugetlb::Cycle as HugetlbCycle;
pub use memcg::Memcg;
pub use swap::SwapInfo;
pub use sys::need_program;

/// Everything one run made; `finish` (or drop) undoes it in reverse order.
pub struct Setup {
    journal: Option<Journal>,
    room_made: bool,
    made: usize,
}

/// What a run will ask for, so that [`check`] can refuse it as a whole
/// before anything is made.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Needs {
    pub page_cache_bytes: Option<u64>,
    pub memcg_bytes: Option<u64>,
    pub swap_bytes: Option<u64>,
    pub hugetlb_pages: Option<u64>,
}

fn need_root() -> Result<()> {
    match crate::exec::euid() {
        0 => Ok(()),
        uid => Err(Error::Refused(format!(
            "the set-up (mounts, loop devices, cgroups, swap, huge pages) needs root \
             (effective uid is {uid}): run vmscale as root, e.g. with sudo"
        ))),
    }
}

/// Refuses (exit 2, with the reason and the numbers) a set-up that cannot
/// be made here, before anything is made: not root, a size out of range
/// or beyond what memory can give (all of tmpfs, zram and huge pages
/// together at most half of MemAvailable), a missing tool, kernel feature
/// or device.
pub fn check(needs: &Needs) -> Result<()> {
    check_in(needs, &state::dir())
}

fn check_in(needs: &Needs, state_dir: &Path) -> Result<()> {
    need_root()?;
    let mut in_memory = 0u64;
    if let Some(b) = needs.page_cache_bytes {
        pagecache_fs::check(b)?;
        in_memory += b;
    }
    if let Some(b) = needs.memcg_bytes {
        memcg::check(b)?;
    }
    if let Some(b) = needs.swap_bytes {
        swap::check(b, &existing(state_dir))?;
        if swap::zram_available() {
            in_memory += b;
        }
    }
    if let Some(p) = needs.hugetlb_pages {
        hugetlb::check(p)?;
        in_memory += p.saturating_mul(hugetlb::page_bytes()?);
    }
    sys::refuse_beyond_half(
        "the set-up's tmpfs, zram and huge pages together",
        in_memory,
    )
}

/// `dir` or its nearest ancestor that exists (where a swap file would go).
fn existing(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("/"))
        .to_path_buf()
}

impl Setup {
    /// Refuses (naming root) when not root; undoes what dead runs left in
    /// the state directory (`$VMSCALE_STATE_DIR`, else /var/lib/vmscale).
    pub fn new() -> Result<Setup> {
        Setup::new_in(&state::dir())
    }

    /// As [`Setup::new`] with the state directory `state_dir`.
    pub fn new_in(state_dir: &Path) -> Result<Setup> {
        need_root()?;
        for line in recover_in(state_dir)? {
            eprintln!("vmscale: {line}");
        }
        Ok(Setup {
            journal: Some(Journal::create(&journal::setup_dir(state_dir))?),
            room_made: false,
            made: 0,
        })
    }

    fn journal(&mut self) -> &mut Journal {
        self.journal
            .as_mut()
            .expect("a Setup's journal lives until finish")
    }

    /// The room, made on first use; and a fresh number for a resource.
    fn room(&mut self) -> Result<(PathBuf, usize)> {
        let room = self.journal().record.room.clone();
        if !self.room_made {
            self.journal().push(Step::Dir { path: room.clone() })?;
            sys::make_dir(&room)?;
            self.room_made = true;
        }
        self.made += 1;
        Ok((room, self.made))
    }

    /// A directory on a file system loop-mounted from an image that lives
    /// on a private tmpfs: files made there (sparse) give page cache
    /// without disk I/O. `bytes` is the image's size; the tmpfs holds
    /// only what is written, at most `bytes`.
    pub fn page_cache_fs(&mut self, bytes: u64) -> Result<PathBuf> {
        pagecache_fs::check(bytes)?;
        let (room, n) = self.room()?;
        pagecache_fs::make(self.journal(), &room, n, bytes)
    }

    /// A memory cgroup limited to `max_bytes` (see `memcg` for v1 hosts);
    /// refuses with the reason when there is no memory controller.
    pub fn memcg(&mut self, max_bytes: u64) -> Result<Memcg> {
        memcg::check(max_bytes)?;
        self.made += 1;
        let n = self.made;
        memcg::make(self.journal(), n, max_bytes)
    }

    /// A swap device of `bytes`: zram where it can be had, else a swap
    /// file; swapped on for the Setup's life.
    pub fn swap(&mut self, bytes: u64) -> Result<SwapInfo> {
        self.swap_as(bytes, false)
    }

    /// A swap file of `bytes` in the room even where zram exists.
    pub fn swap_file(&mut self, bytes: u64) -> Result<SwapInfo> {
        self.swap_as(bytes, true)
    }

    fn swap_as(&mut self, bytes: u64, file: bool) -> Result<SwapInfo> {
        let dir = self
            .journal()
            .path()
            .parent()
            .unwrap_or(Path::new("/"))
            .to_path_buf();
        swap::check_as(bytes, &dir, file)?;
        let (room, n) = self.room()?;
        swap::make(self.journal(), &room, n, bytes, file)
    }

    /// nr_hugepages raised by `pages` for the Setup's life.
    pub fn hugetlb_pages(&mut self, pages: u64) -> Result<()> {
        hugetlb::check(pages)?;
        hugetlb::raise(self.journal(), pages)
    }

    /// case-hugetlb: the pool grown by `pages` and shrunk back at once,
    /// timed; what the kernel gave is measured, not refused.
    pub fn hugetlb_cycle(&mut self, pages: u64) -> Result<HugetlbCycle> {
        hugetlb::check(pages)?;
        hugetlb::cycle(self.journal(), pages)
    }

    /// Undoes everything now, reporting the errors; on an error the
    /// journal is kept for `vmscale restore`.
    pub fn finish(mut self) -> Result<()> {
        self.undo()
    }

    fn undo(&mut self) -> Result<()> {
        let Some(mut j) = self.journal.take() else {
            return Ok(());
        };
        // A forked worker that drops its copy undoes nothing of its parent's.
        if j.record.pid != std::process::id() {
            std::mem::forget(j);
            return Ok(());
        }
        let (_, errors) = unwind(&mut j);
        settle(j, errors)
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Err(e) = self.undo() {
            eprintln!("vmscale: undoing the set-up failed: {e}");
        }
    }
}

/// What the resources of `steps` still hold, for a person: swap in use on
/// its swap devices, processes in its cgroups.
pub fn holding(steps: &[Step]) -> String {
    let mut held = Vec::new();
    for s in steps {
        match s {
            Step::SwapOn { device } => {
                if let Some(kib) = swap::used_kib(device) {
                    held.push(format!(
                        "{} MiB swapped out to {}",
                        kib / 1024,
                        device.display()
                    ));
                }
            }
            Step::Cgroup { path } => {
                let procs = std::fs::read_to_string(path.join("cgroup.procs")).unwrap_or_default();
                let n = procs.lines().count();
                if n > 0 {
                    let s = if n == 1 { "" } else { "es" };
                    held.push(format!("{n} process{s} in {}", path.display()));
                }
            }
            _ => {}
        }
    }
    if held.is_empty() {
        "no swap or cgroup in use".into()
    } else {
        held.join(", ")
    }
}

/// Undoes one step if its resource is there; lines say what was done.
fn undo(step: &Step, room: &Path) -> Result<Vec<String>> {
    let one = |l: Option<String>| -> Vec<String> { l.into_iter().collect() };
    Ok(match step {
        Step::Dir { path } => {
            sys::remove_dir(path)?;
            Vec::new()
        }
        Step::Tmpfs { mountpoint } | Step::Mount { mountpoint } => one(sys::unmount(mountpoint)?),
        Step::Loop { image } => pagecache_fs::detach(image)?,
        Step::Controller { file } => one(memcg::disable(file)?),
        Step::Cgroup { path } => one(memcg::remove(path)?),
        Step::Zram { id, before } => swap::remove_zram(*id, before)?,
        Step::SwapFile { path } => one(swap::remove_file(path)?),
        Step::SwapOn { device } => one(swap::off(device, room)?),
        Step::HugePages { original } => one(hugetlb::restore(*original)?),
    })
}

/// Undoes the journal's steps, last first, each dropped from the journal
/// once undone; a step that fails stays. Returns lines and errors.
fn unwind(j: &mut Journal) -> (Vec<String>, Vec<String>) {
    let room = j.record.room.clone();
    let (mut lines, mut errors) = (Vec::new(), Vec::new());
    for i in (0..j.record.steps.len()).rev() {
        let step = j.record.steps[i].clone();
        match undo(&step, &room).and_then(|l| j.remove_step(i).map(|()| l)) {
            Ok(l) => lines.extend(l),
            Err(e) => errors.push(e.to_string()),
        }
    }
    (lines, errors)
}

/// Removes the journal when everything is undone, else keeps it and says
/// how to finish.
fn settle(j: Journal, errors: Vec<String>) -> Result<()> {
    if errors.is_empty() {
        return j.close();
    }
    Err(Error::Failed(format!(
        "{}; the set-up journal {} is kept: fix the cause and run `vmscale restore`",
        errors.join("; "),
        j.path().display()
    )))
}

/// At every vmscale start and in `vmscale restore`: undoes what killed
/// runs left (mounts, loop devices, cgroups, swap devices, files,
/// nr_hugepages), from their journals in the state directory; a live
/// run's set-up is left alone. Returns lines saying what was undone.
pub fn recover() -> Result<Vec<String>> {
    recover_in(&state::dir())
}

/// As [`recover`] for the state directory `state_dir`.
pub fn recover_in(state_dir: &Path) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for mut j in journal::dead(&journal::setup_dir(state_dir))? {
        let who = format!(
            "undid the set-up of run pid {} started {}:",
            j.record.pid, j.record.started_at
        );
        let (done, failed) = unwind(&mut j);
        if !done.is_empty() {
            lines.push(who);
            lines.extend(done.into_iter().map(|l| format!("  {l}")));
        }
        if let Err(e) = settle(j, failed) {
            errors.push(e.to_string());
        }
    }
    if !errors.is_empty() {
        return Err(Error::Refused(errors.join("; ")));
    }
    Ok(lines)
}
