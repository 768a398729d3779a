//! colour (seed 003): T tasks, released together, each allocate and touch
//! M bytes of anonymous memory (optionally taking turns in steps of K pages,
//! like an MPI job starting up). Each task then reads its own physical frame
//! numbers from /proc/self/pagemap and marks the THP-backed ones from
//! /proc/kpageflags; the parent computes page-colour histograms and skew.
//! Per-CPU page lists (/proc/zoneinfo) are read before and after.

use super::placement::Placed;
use super::values::task_values;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::colour_data::{TaskValues, sample_data};
use super::pft::Thp;
use super::stored::{Text, view_struct};
use super::{Case, Measure, SampleData};
use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{self, Task, TaskReport, clock};
use crate::machine::Snapshot;
use crate::monitor::zoneinfo;
use crate::stats::colour::{self as cs, PAGEMAP_PFN_MASK, PAGEMAP_PRESENT, PAGEMAP_SWAPPED};

/// The validated configuration, stored with each run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub place: Placed,
    pub size_per_task: u64,
    /// Pages each task touches per turn when tasks alternate; `None`: free-running.
    pub interleave: Option<u64>,
    /// Colours analysed (LLC geometry, or `--colours`).
    pub colours: u64,
    /// Where `colours` came from, for the report.
    pub colours_from: String,
    pub l2_colours: Option<u64>,
    pub thp: Thp,
    pub page_size: u64,
}

view_struct! {
    /// What the colour report prints of a stored run's configuration.
    pub struct Stored {
        pub mode: Text,
        pub thp: Text,
        pub colours_from: Text,
        pub page_size: Option<u64>,
        pub size_per_task: u64,
        pub interleave: Option<u64>,
        pub colours: u64,
        pub l2_colours: Option<u64>,
    }
}

task_values! {
    /// Indices into a task report's values.
    enum V {
        Touched,
        Present,
        Thp,
        Kpf,
        Swapped,
    }
}

/// A mark this workload sets in pagemap entries it has read: bits 58-60 are
/// always zero in the kernel's format, so bit 58 is free to say "THP".
const MARK_THP: u64 = 1 << 58;
/// /proc/kpageflags bits: KPF_HUGE (hugetlb) and KPF_THP.
const KPF_HUGE: u64 = 1 << 17;
const KPF_THP: u64 = 1 << 22;

/// Words before the per-task frame slots: turn counter, abort flag, done
/// count, padding.
const HEADER_WORDS: usize = 8;

pub struct Colour {
    cfg: Config,
    machine: Snapshot,
}

impl Colour {
    /// Validates the configuration and refuses if PFNs cannot be read.
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Colour> {
        cfg.place.check(&machine)?;
        if cfg.size_per_task < cfg.page_size {
            return Err(Error::Input(format!(
                "--size-per-task {} is less than one page ({} bytes): raise it",
                cfg.size_per_task, cfg.page_size
            )));
        }
        if cfg.interleave == Some(0) {
            return Err(Error::Input(
                "--interleave 0 touches nothing per turn: use 1 or more pages".into(),
            ));
        }
        if !(2..=1 << 24).contains(&cfg.colours) {
            return Err(Error::Input(format!(
                "{} colours cannot be analysed: use --colours between 2 and 16777216",
                cfg.colours
            )));
        }
        cfg.thp.check(&machine)?;
        check_pagemap(cfg.page_size as usize)?;
        Ok(Colour { cfg, machine })
    }

    fn pages_per_task(&self) -> usize {
        (self.cfg.size_per_task / self.cfg.page_size) as usize
    }

    fn variant(&self) -> &'static str {
        if self.cfg.interleave.is_some() {
            "interleave"
        } else {
            "parallel"
        }
    }
}

/// Touches one page, reads its pagemap entry and refuses (exit 2) if the
/// frame number is hidden (no CAP_SYS_ADMIN) or pagemap is unreadable.
pub fn check_pagemap(page_size: usize) -> Result<()> {
    let map = Region::private_noreserve(page_size)
        .map_err(|e| e.context("the pagemap probe").refusal())?;
    // SAFETY: the mapping is one writable page.
    unsafe { map.ptr().write_volatile(1) };
    let mut entry = [0u64; 1];
    read_pagemap(map.ptr() as usize, page_size, &mut entry).map_err(|e| {
        Error::Refused(format!(
            "cannot read /proc/self/pagemap ({e}): colour needs it to find physical frames"
        ))
    })?;
    if entry[0] & PAGEMAP_PRESENT == 0 {
        return Err(Error::Refused(
            "/proc/self/pagemap says a page just written is not present: \
             this kernel's pagemap cannot be trusted for colour analysis"
                .into(),
        ));
    }
    if cs::pfns_hidden(&entry) {
        return Err(Error::Refused(
            "the kernel hides physical frame numbers from this process \
             (/proc/self/pagemap reads PFN 0 without CAP_SYS_ADMIN): \
             run colour as root or with CAP_SYS_ADMIN"
                .into(),
        ));
    }
    Ok(())
}

/// Shared memory surviving fork: turn counter, abort flag, then one slot of
/// pagemap entries per task, each written only by its task (the header is
/// used only through atomics; the parent reads the slots after every task
/// has finished).
struct Shared {
    mem: Region,
    pages: usize,
}

impl Shared {
    fn new(tasks: usize, pages: usize) -> Result<Shared> {
        let words = HEADER_WORDS + tasks * pages;
        let mem = Region::shared(words * 8)
            .map_err(|e| e.context(format!("{tasks} x {pages} frame numbers")))?;
        Ok(Shared { mem, pages })
    }

    fn word(&self, i: usize) -> &AtomicU64 {
        self.mem.u64_at(i * 8)
    }

    fn turn(&self) -> &AtomicU64 {
        self.word(0)
    }

    fn abort(&self) -> &AtomicU64 {
        self.word(1)
    }

    /// Tasks that have read their frames (or failed).
    fn done(&self) -> &AtomicU64 {
        self.word(2)
    }

    fn slot_ptr(&self, i: usize) -> *mut u64 {
        let base = self.mem.ptr() as *mut u64;
        // SAFETY: slot i lies inside the mapping (HEADER_WORDS + tasks * pages words).
        unsafe { base.add(HEADER_WORDS + i * self.pages) }
    }

    /// Task i's slot, for that task alone to write.
    #[allow(clippy::mut_from_ref)]
    fn slot_mut(&self, i: usize) -> &mut [u64] {
        // SAFETY: slots are disjoint and inside the mapping; only task i takes slot i.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(i), self.pages) }
    }

    /// Task i's slot, read after all tasks finished.
    fn slot(&self, i: usize) -> &[u64] {
        // SAFETY: as slot_mut; no task is running any more.
        unsafe { std::slice::from_raw_parts(self.slot_ptr(i), self.pages) }
    }
}

/// Reads the pagemap entries of `out.len()` pages from virtual address
/// `start` with batched pread.
fn read_pagemap(start: usize, page_size: usize, out: &mut [u64]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open("/proc/self/pagemap")?;
    let first = (start / page_size) as u64;
    const BATCH: usize = 1 << 16;
    for (i, chunk) in out.chunks_mut(BATCH).enumerate() {
        // SAFETY: viewing a u64 slice as bytes of the same length.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(chunk.as_mut_ptr() as *mut u8, chunk.len() * 8)
        };
        let offset = (first + (i * BATCH) as u64) * 8;
        f.read_exact_at(bytes, offset)?;
    }
    Ok(())
}

/// Marks entries whose frame is part of a THP (or hugetlb page) per
/// /proc/kpageflags, read once per run of consecutive frames. Returns
/// `false` when kpageflags cannot be read (THP pages are then not separated).
fn mark_thp(entries: &mut [u64]) -> bool {
    use std::os::unix::fs::FileExt;
    let Ok(f) = std::fs::File::open("/proc/kpageflags") else {
        return false;
    };
    let mut flags = vec![0u64; 4096];
    let mut i = 0;
    while i < entries.len() {
        if entries[i] & PAGEMAP_PRESENT == 0 {
            i += 1;
            continue;
        }
        let pfn = entries[i] & PAGEMAP_PFN_MASK;
        let mut n = 1;
        while i + n < entries.len()
            && n < flags.len()
            && entries[i + n] & PAGEMAP_PRESENT != 0
            && entries[i + n] & PAGEMAP_PFN_MASK == pfn + n as u64
        {
            n += 1;
        }
        // SAFETY: viewing the first n words of `flags` as bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(flags.as_mut_ptr() as *mut u8, n * 8) };
        if f.read_exact_at(bytes, pfn * 8).is_err() {
            return false;
        }
        for k in 0..n {
            if flags[k] & (KPF_THP | KPF_HUGE) != 0 {
                entries[i + k] |= MARK_THP;
            }
        }
        i += n;
    }
    true
}

/// Spins (then yields) until it is `mine`'s turn; false on abort or when no
/// task has moved for 10 s.
fn wait_turn(shared: &Shared, mine: u64) -> bool {
    let mut spins = 0u64;
    let mut last = shared.turn().load(Ordering::Acquire);
    let mut since = clock::monotonic_ns();
    loop {
        let now_turn = shared.turn().load(Ordering::Acquire);
        if now_turn == mine {
            return true;
        }
        if shared.abort().load(Ordering::Acquire) != 0 {
            return false;
        }
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
            continue;
        }
        std::thread::yield_now();
        if spins.is_multiple_of(1024) {
            let t = clock::monotonic_ns();
            if now_turn != last {
                last = now_turn;
                since = t;
            } else if t - since > 10_000_000_000 {
                return false;
            }
        }
    }
}

struct TaskPlan {
    pages: usize,
    page_size: usize,
    thp: Thp,
    interleave: Option<usize>,
    tasks: usize,
}

/// One task. Its memory is held until every task has read its frames: a
/// frame freed early would be handed to a task still faulting and appear in
/// two tasks' lists.
fn colour_task(task: &Task, shared: &Shared, plan: &TaskPlan) -> TaskReport {
    let (r, map) = touch_and_read(task, shared, plan);
    shared.done().fetch_add(1, Ordering::AcqRel);
    let mut spins = 0u64;
    let since = clock::monotonic_ns();
    while (shared.done().load(Ordering::Acquire) as usize) < plan.tasks {
        std::thread::yield_now();
        spins += 1;
        if spins.is_multiple_of(1024) && clock::monotonic_ns() - since > 60_000_000_000 {
            break;
        }
    }
    drop(map);
    r
}

fn touch_and_read(task: &Task, shared: &Shared, plan: &TaskPlan) -> (TaskReport, Option<Region>) {
    let mut r = TaskReport::default();
    let bytes = plan.pages * plan.page_size;
    let map = match Region::private_noreserve(bytes) {
        Ok(m) => m,
        Err(e) => {
            shared.abort().store(1, Ordering::Release);
            r.fail(&e.to_string());
            return (r, None);
        }
    };
    if let Err(e) = map.advise_thp(plan.thp.pages()) {
        shared.abort().store(1, Ordering::Release);
        r.fail(&e.to_string());
        return (r, Some(map));
    }
    let base = map.ptr();
    let touch = |from: usize, to: usize| {
        for pg in from..to {
            // SAFETY: pg < pages, so the byte is inside the mapping.
            unsafe { base.add(pg * plan.page_size).write_volatile(1) };
        }
    };

    task.wait_start();
    let before = task.usage();
    r.start_ns = clock::monotonic_ns();
    let mut touched = 0usize;
    match plan.interleave {
        None => {
            touch(0, plan.pages);
            touched = plan.pages;
        }
        Some(k) => {
            for (step, from) in (0..plan.pages).step_by(k).enumerate() {
                let mine = (step * plan.tasks + task.index) as u64;
                if !wait_turn(shared, mine) {
                    shared.abort().store(1, Ordering::Release);
                    r.fail("interleaved touch abandoned: another task failed or stalled for 10 s");
                    return (r, Some(map));
                }
                let to = (from + k).min(plan.pages);
                touch(from, to);
                touched += to - from;
                shared.turn().fetch_add(1, Ordering::AcqRel);
            }
        }
    }
    r.end_ns = clock::monotonic_ns();
    r.set_usage(&task.usage().since(&before));
    r.values[V::Touched] = touched as f64;

    let slot = shared.slot_mut(task.index);
    if let Err(e) = read_pagemap(base as usize, plan.page_size, slot) {
        r.fail(&format!("reading /proc/self/pagemap: {e}"));
        return (r, Some(map));
    }
    if cs::pfns_hidden(slot) {
        r.fail("pagemap returned PFN 0 for present pages: CAP_SYS_ADMIN is missing");
        return (r, Some(map));
    }
    r.values[V::Present] = slot.iter().filter(|&&e| e & PAGEMAP_PRESENT != 0).count() as f64;
    r.values[V::Swapped] = slot.iter().filter(|&&e| e & PAGEMAP_SWAPPED != 0).count() as f64;
    r.values[V::Kpf] = if mark_thp(slot) { 1.0 } else { 0.0 };
    r.values[V::Thp] = slot.iter().filter(|&&e| e & MARK_THP != 0).count() as f64;
    (r, Some(map))
}

/// `run quick`: 2 tasks x 16 MiB; 16 colours where sysfs does not give
/// the LLC's geometry.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    let mut a = super::spec::args("--tasks 2 --size-per-task 16M");
    if m.llc_colours().is_none() {
        a.extend(super::spec::args("--colours 16"));
    }
    vec![a]
}

impl Measure for Colour {
    fn cases(&self) -> Vec<Case> {
        Case::grid([self.variant()], &self.cfg.place.tasks)
    }

    fn memory_need(&self) -> u64 {
        let most = self.cfg.place.most() as u64;
        // Touched memory plus 8 bytes of frame number per page.
        most.saturating_mul(
            self.cfg
                .size_per_task
                .saturating_add(self.pages_per_task() as u64 * 8),
        )
    }

    fn sample(&self, case: &Case) -> Result<SampleData> {
        let cpus = exec::pin::plan(&self.cfg.place.pin, case.tasks, &self.machine)?;
        let shared = Shared::new(case.tasks, self.pages_per_task())?;
        let plan = TaskPlan {
            pages: self.pages_per_task(),
            page_size: self.cfg.page_size as usize,
            thp: self.cfg.thp,
            interleave: self.cfg.interleave.map(|k| k as usize),
            tasks: case.tasks,
        };
        let pcp_before = zoneinfo::read_live();
        let outcome = exec::run_tasks(self.cfg.place.mode, &cpus, |task| {
            colour_task(task, &shared, &plan)
        })?;
        let pcp_after = zoneinfo::read_live();
        exec::first_error(&outcome.reports)?;
        let t0 = clock::monotonic_ns();
        let frames: Vec<Vec<u64>> = (0..case.tasks)
            .map(|i| {
                shared
                    .slot(i)
                    .iter()
                    .filter(|&&e| e & PAGEMAP_PRESENT != 0 && e & MARK_THP == 0)
                    .map(|&e| e & PAGEMAP_PFN_MASK)
                    .collect()
            })
            .collect();
        let refs: Vec<&[u64]> = frames.iter().map(|f| f.as_slice()).collect();
        let analysis = cs::analyse(&refs, self.cfg.colours, self.cfg.l2_colours);
        let analysis_s = (clock::monotonic_ns() - t0) as f64 / 1e9;
        let page_kib = self.cfg.page_size as f64 / 1024.0;
        let values: Vec<TaskValues> = outcome.reports.iter().map(task_values).collect();
        let mut d = sample_data(&values, &analysis);
        let f = &mut d.figures;
        f.insert("analysis".into(), analysis_s);
        if let (Some(b), Some(a)) = (&pcp_before, &pcp_after) {
            let (tb, ta) = (zoneinfo::totals(b), zoneinfo::totals(a));
            f.insert("pcp_before_kib".into(), tb.held as f64 * page_kib);
            f.insert("pcp_after_kib".into(), ta.held as f64 * page_kib);
            f.insert("pcp_high_kib".into(), ta.high as f64 * page_kib);
            f.insert("pcp_batch".into(), ta.batch_max as f64);
            for (i, r) in outcome.reports.iter().enumerate() {
                if r.cpu >= 0 {
                    let held = |zones: &[zoneinfo::Zone]| {
                        zones
                            .iter()
                            .flat_map(|z| &z.pagesets)
                            .filter(|p| p.cpu as i64 == r.cpu)
                            .map(|p| p.count)
                            .sum::<u64>() as f64
                    };
                    d.tasks[i].insert("pcp_before".into(), held(b));
                    d.tasks[i].insert("pcp_after".into(), held(a));
                }
            }
        }
        Ok(d)
    }
}

/// What one task measured, by name.
fn task_values(r: &TaskReport) -> TaskValues {
    TaskValues {
        cpu: r.cpu,
        wall: r.end_ns.saturating_sub(r.start_ns) as f64 / 1e9,
        start_ns: r.start_ns,
        end_ns: r.end_ns,
        user: r.user_ns as f64 / 1e9,
        system: r.sys_ns as f64 / 1e9,
        faults: r.minflt as f64,
        touched: r.values[V::Touched],
        present: r.values[V::Present],
        thp: r.values[V::Thp],
        kpageflags: r.values[V::Kpf] > 0.0,
        swapped: r.values[V::Swapped],
    }
}
