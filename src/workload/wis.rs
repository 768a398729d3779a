//! will-it-scale's VM tests (page_fault1/2/3, mmap1/2, brk1/2, malloc1/2,
//! tlb_flush1/2/3), each doing what will-it-scale's test does, in threads or
//! processes. Unlike will-it-scale, each task reads its operation count at
//! real timestamps (never an assumed 1 s), faults are measured by rusage
//! beside the operations, and the TLB tests count the shootdown interrupts
//! of /proc/interrupts over the sample.

use super::spec::{lower, lower_rate, rate};
use super::stored::view_struct;
use super::values::task_values;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

use super::churn::{self, Series};
use super::fault_map::OwnedFile;
use super::timed::Timed;
use super::{Case, Measure, SampleData, Workload};
use crate::exec::region::Region;
use crate::exec::{self, Mode, Task, TaskReport, clock, pin::Pin};
use crate::machine::Snapshot;

use super::options::page_size;
use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};
use crate::parse;

/// wis in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "wis",
    about: "will-it-scale's VM tests: page_fault1-3 mmap1-2 brk1-2 malloc1-2 tlb_flush1-3",
    examples: "Examples:\n  vmscale run wis --test page_fault1 --tasks 1,2\n  \
vmscale run wis --test tlb_flush2 --tasks 2 --mode thread --time 2\n  \
vmscale run wis --test mmap2 --mode process --dir /mnt/scratch",
    // Will-it-scale's figures: operations per second first.
    figures: &[
        rate("ops/s", "ops/s"),
        rate("ops/s/task", "ops/s"),
        rate("faults/s", "faults/s"),
        lower("faults/op", "faults"),
        lower_rate("shootdowns/s", "IPIs/s"),
    ],
    report: super::Report::Wis,
    quick,
    listing: Some(super::spec::Listing {
        option: "test",
        lines: listing,
        also: &[],
    }),
    ..Spec::of::<Args>()
};

/// The tests, by will-it-scale's names (`--test`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Test {
    /// anonymous private mapping: write each page, unmap
    PageFault1,
    /// file private mapping: write (COW) each page, unmap
    PageFault2,
    /// file shared mapping: write each page, unmap
    PageFault3,
    /// anonymous mmap and munmap, untouched
    Mmap1,
    /// file mmap and munmap, untouched
    Mmap2,
    /// brk up and down by one page
    Brk1,
    /// brk up and down by one page above a page of the task's own heap
    Brk2,
    /// malloc and free of a large block (mmap'd by glibc)
    Malloc1,
    /// malloc and free of 1 KiB
    Malloc2,
    /// file private: write, MADV_DONTNEED, read back, per page
    TlbFlush1,
    /// anonymous 1 MiB: write, MADV_DONTNEED, read back, per page
    TlbFlush2,
    /// file shared: write, MADV_DONTNEED, read back, per page
    TlbFlush3,
}

impl Test {
    /// The test a name stands for (`None` for a name will-it-scale's VM
    /// tests do not have).
    pub fn named(name: &str) -> Option<Test> {
        <Test as clap::ValueEnum>::from_str(name, false).ok()
    }

    /// What the test does, as `--help` says it.
    pub fn about(self) -> String {
        use clap::ValueEnum as _;
        self.to_possible_value()
            .and_then(|p| p.get_help().map(ToString::to_string))
            .unwrap_or_default()
    }

    /// The test's name, as will-it-scale names it.
    pub fn name(self) -> String {
        use clap::ValueEnum as _;
        self.to_possible_value()
            .map(|p| p.get_name().to_string())
            .unwrap_or_default()
    }

    /// Whether the test runs in processes alone: brk1 and brk2 in threads
    /// would move one shared program break under the process's allocator.
    pub fn processes_only(self) -> bool {
        matches!(self, Test::Brk1 | Test::Brk2)
    }

    /// Whether each task works on a file of its own.
    fn uses_file(self) -> bool {
        use Test::*;
        matches!(
            self,
            PageFault2 | PageFault3 | Mmap2 | TlbFlush1 | TlbFlush3
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub test: Test,
    pub tasks: Vec<usize>,
    pub modes: Vec<Mode>,
    /// Bytes mapped per loop (will-it-scale: 128 MiB; tlb_flush2: 1 MiB).
    pub size: u64,
    #[serde(flatten)]
    pub timed: Timed,
    /// Where file tests create their unnamed (O_TMPFILE) files.
    pub dir: std::path::PathBuf,
    pub pin: Pin,
    pub page_size: u64,
    /// What `--aslr` asked for.
    pub aslr: Aslr,
    /// Whether the tasks' address space was laid out at random, read
    /// when the run was made (false after `--aslr off`'s run again).
    pub randomised: bool,
}

view_struct! {
    /// What the wis report prints of a stored run's configuration.
    pub struct Stored {
        pub test: Option<String>,
        pub size: Option<u64>,
        pub secs: Option<f64>,
        pub randomised: Option<bool>,
    }
}

task_values! {
    /// What each task reports in its values.
    enum V {
        Ops,
        Points,
        Dirtied,
        /// The page the task's next touching pass starts at.
        ResumeAt,
    }
}

pub struct Wis {
    cfg: Config,
    machine: Snapshot,
    /// The file tests' files, one per task, made and written once by the
    /// first sample that needs them and kept for the run, as will-it-scale
    /// keeps each task's file: a sample times passes over a file whose
    /// page cache is in place, never the first pass that allocates it.
    files: Mutex<Vec<OwnedFile>>,
    /// The page each task's first touching pass of a sample starts at:
    /// where its pass of the sample before stopped. will-it-scale's pass
    /// runs on across its one-second totals; one begun anew each sample
    /// would touch the head of the file more often than the rest, and a
    /// page's cost depends on where it lies (docs/wis.md, "A pass cut at
    /// the sample's end").
    resume_at: Mutex<Vec<usize>>,
}

impl Wis {
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Wis> {
        super::check_tasks(&cfg.tasks)?;
        check_modes(cfg.test, &cfg.modes)?;
        super::check_timed(
            cfg.timed.secs,
            0.05,
            Some(cfg.timed.every),
            "--size",
            cfg.size,
            cfg.page_size,
        )?;
        if cfg.test.uses_file() {
            OwnedFile::tmpfile(&cfg.dir, cfg.page_size).map_err(|e| {
                Error::Input(format!(
                    "--dir: {e}; name a directory on a local filesystem"
                ))
            })?;
        }
        super::check_pin(&cfg.pin, &cfg.tasks, &machine)?;
        Ok(Wis {
            cfg,
            machine,
            files: Mutex::new(Vec::new()),
            resume_at: Mutex::new(Vec::new()),
        })
    }
}

/// `run quick`: page_fault1 and tlb_flush2 in threads on every CPU, each
/// sample 0.1 s.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    let cpus = m.cpus.len().max(1);
    // The suite's other entries run in vmscale's own layout, so these do
    // too: no running again without randomisation for a quick look.
    [("page_fault1", "8M"), ("tlb_flush2", "1M")]
        .iter()
        .map(|(test, size)| {
            super::spec::args(&format!(
                "--test {test} --tasks {cpus} --mode thread --size {size} --time 0.1 \
                 --every 0.02 --aslr on"
            ))
        })
        .collect()
}

// `vmscale run wis`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The will-it-scale test (`list`: the tests, one a line)
    #[arg(long, value_parser = test_names())]
    pub test: String,
    /// Task counts: a list (1,2,4), a range (1-8) or auto
    #[arg(long, default_value = "auto")]
    pub tasks: String,
    /// thread, process, or both (thread,process); auto: both as
    /// will-it-scale runs them, processes alone for brk1 and brk2
    #[arg(long, value_parser = mode_names(), value_delimiter = ',', default_value = "auto")]
    pub mode: Vec<String>,
    /// Bytes per loop [default: will-it-scale's: 128M, 1M for tlb_flush2, 128M for malloc1]
    #[arg(long)]
    pub size: Option<String>,
    #[command(flatten)]
    pub timed: Timed,
    /// Directory for the file tests' unnamed files (default: the temp directory)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
    /// Placement: compact, spread, none, or a CPU list
    #[arg(long, default_value = "compact")]
    pub pin: Pin,
    /// Address-space randomisation: off as will-it-scale's runtest.py
    /// runs its tests (setarch -R), or on as the machine has it
    #[arg(long, value_enum, default_value = "off")]
    pub aslr: Aslr,
}

/// `--aslr`: the layout the tasks run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Aslr {
    /// vmscale runs itself again without randomisation (`setarch -R`).
    Off,
    /// The machine's own setting.
    On,
}

/// `--test`: the tests by name, and `list`.
fn test_names() -> clap::builder::PossibleValuesParser {
    use clap::ValueEnum as _;
    let tests = Test::value_variants()
        .iter()
        .filter_map(|t| t.to_possible_value());
    let list = clap::builder::PossibleValue::new("list").help("the tests, one a line");
    clap::builder::PossibleValuesParser::new(tests.chain([list]))
}

/// Why the brk tests run in processes alone, as the plan and the report
/// say it.
pub const PROCESSES_ONLY: &str = "in processes alone (threads would share one program break)";

/// What `--aslr off` does, as the plan and the report say it.
pub const FIXED_LAYOUT: &str =
    "no address-space randomisation, as will-it-scale's runtest.py (setarch -R)";

/// `--mode`: thread, process, and `auto`.
fn mode_names() -> clap::builder::PossibleValuesParser {
    use clap::ValueEnum as _;
    let modes = Mode::value_variants()
        .iter()
        .filter_map(|m| m.to_possible_value());
    let auto =
        clap::builder::PossibleValue::new("auto").help("both, processes alone for brk1 and brk2");
    clap::builder::PossibleValuesParser::new(modes.chain([auto]))
}

/// The modes `--mode` names for `test`, each once: `auto` alone stands for
/// [`auto_modes`].
fn modes(test: Test, given: &[String]) -> Result<Vec<Mode>> {
    if given.iter().any(|m| m == "auto") {
        if given.len() > 1 {
            return Err(Error::Input(
                "--mode auto stands alone: give auto, or thread, process or both".into(),
            ));
        }
        return Ok(auto_modes(test));
    }
    let mut out = Vec::new();
    for m in given {
        let m: Mode = m.parse()?;
        if !out.contains(&m) {
            out.push(m);
        }
    }
    Ok(out)
}

/// `--mode auto`, the default: both modes as will-it-scale runs them,
/// processes alone for the brk tests ([`Test::processes_only`]).
fn auto_modes(test: Test) -> Vec<Mode> {
    if test.processes_only() {
        vec![Mode::Process]
    } else {
        vec![Mode::Process, Mode::Thread]
    }
}

/// Refuses no mode, and threads for a test that runs in processes alone.
fn check_modes(test: Test, modes: &[Mode]) -> Result<()> {
    if modes.is_empty() {
        return Err(Error::Input(
            "--mode must name thread, process or both".into(),
        ));
    }
    if test.processes_only() && modes.contains(&Mode::Thread) {
        return Err(Error::Input(format!(
            "{} in threads moves one shared program break under the allocator of the \
             process: run it with --mode process (or without --mode)",
            test.name()
        )));
    }
    Ok(())
}

/// `--test list`: each test, what it does, and what it needs.
fn listing() -> Vec<String> {
    use clap::ValueEnum as _;
    let named: Vec<(Test, String)> = Test::value_variants()
        .iter()
        .filter_map(|&t| Some((t, t.to_possible_value()?.get_name().to_string())))
        .collect();
    let name_w = named.iter().map(|(_, n)| n.len()).max().unwrap_or(0);
    named
        .iter()
        .map(|(t, name)| {
            let needs = if t.uses_file() { " (in --dir)" } else { "" };
            format!("{name:name_w$}  {}{needs}", t.about())
        })
        .collect()
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        // `list` is answered before a workload is built (commands::run).
        let test = Test::named(&a.test)
            .ok_or_else(|| Error::Input(format!("--test {}: not a will-it-scale test", a.test)))?;
        let default = match test {
            Test::TlbFlush2 => "1M",
            _ => "128M",
        };
        let cfg = Config {
            test,
            tasks: super::options::tasks(&a.tasks, m)?,
            modes: modes(test, &a.mode)?,
            size: parse::size_arg("--size", a.size.as_deref().unwrap_or(default))?,
            timed: a.timed,
            dir: a.dir.clone().unwrap_or_else(std::env::temp_dir),
            pin: a.pin.clone(),
            page_size: page_size(m),
            aslr: a.aslr,
            randomised: exec::layout::randomised(),
        };
        env.made(cfg, |cfg| Wis::new(cfg, m.clone()))
    }
}

impl Measure for Wis {
    fn sample_s(&self, case: &Case) -> f64 {
        self.cfg.timed.sample_s(case.tasks)
    }

    fn cases(&self) -> Vec<Case> {
        Case::grid(self.cfg.modes.iter().map(Mode::as_str), &self.cfg.tasks)
    }
    fn plan_notes(&self) -> Vec<String> {
        let test = self.cfg.test;
        let mut notes = Vec::new();
        if test.processes_only() {
            notes.push(format!("{} {PROCESSES_ONLY}", test.name()));
        }
        if self.cfg.aslr == Aslr::Off {
            notes.push(FIXED_LAYOUT.into());
        }
        notes
    }
    fn fixed_layout(&self) -> bool {
        self.cfg.aslr == Aslr::Off
    }
    fn memory_need(&self) -> u64 {
        // Anonymous memory a pass holds, plus the page cache of the task's
        // file, which stays for the run.
        use Test::*;
        let per = match self.cfg.test {
            PageFault2 => 2 * self.cfg.size,
            PageFault1 | PageFault3 | TlbFlush1 | TlbFlush2 | TlbFlush3 => self.cfg.size,
            _ => self.cfg.page_size * 16,
        };
        (self.cfg.tasks.iter().copied().max().unwrap_or(1) as u64).saturating_mul(per)
    }
    fn sample(&self, case: &Case) -> Result<SampleData> {
        let mode: Mode = case.variant.parse()?;
        let cpus = exec::pin::plan(&self.cfg.pin, case.tasks, &self.machine)?;
        let series = Series::new(case.tasks)?;
        let files = self.files_for(case.tasks)?;
        let mut resume_at = self
            .resume_at
            .lock()
            .map_err(|_| Error::Failed("the wis resume lock was poisoned".into()))?;
        let known = resume_at.len();
        resume_at.resize(known.max(case.tasks), 0);
        let tlb0 = tlb_shootdowns();
        let t0 = clock::monotonic_ns();
        let out = exec::run_tasks(mode, &cpus, |task| {
            let at = resume_at[task.index];
            self.task(task, &series, files.get(task.index), at)
        })?;
        for (at, r) in resume_at.iter_mut().zip(&out.reports) {
            if r.error().is_none() {
                *at = r.values[V::ResumeAt] as usize;
            }
        }
        let secs = (clock::monotonic_ns() - t0) as f64 / 1e9;
        let tlb = match (tlb0, tlb_shootdowns()) {
            (Some(a), Some(b)) => Some((b.saturating_sub(a) as f64, secs)),
            _ => None,
        };
        summarise(&out.reports, &series, tlb)
    }
}

impl Wis {
    /// The files of `tasks` tasks (none for the anonymous tests): those
    /// missing are made and given one pass of the test before anything is
    /// timed, as will-it-scale's first (warm-up) pass over its file.
    fn files_for(&self, tasks: usize) -> Result<std::sync::MutexGuard<'_, Vec<OwnedFile>>> {
        let mut files = self
            .files
            .lock()
            .map_err(|_| Error::Failed("the wis files' lock was poisoned".into()))?;
        while self.cfg.test.uses_file() && files.len() < tasks {
            let f = OwnedFile::tmpfile(&self.cfg.dir, self.cfg.size)?;
            self.pass(Some(&f), 0, u64::MAX)?;
            files.push(f);
        }
        Ok(files)
    }

    /// One pass of the test: its operations, counted. A page-touching
    /// pass starts at page `from` and stops at the sample's `end`
    /// (monotonic ns).
    fn pass(&self, file: Option<&OwnedFile>, from: usize, end: u64) -> Result<Pass> {
        let (len, ps) = (self.cfg.size as usize, self.cfg.page_size as usize);
        let touch = |file, shared, tlb| touch_pass(file, shared, len, ps, tlb, from, end);
        let whole = |ops: Result<u64>| ops.map(|ops| Pass { ops, resume_at: 0 });
        use Test::*;
        match self.cfg.test {
            PageFault1 => touch(None, false, false),
            PageFault2 => touch(file, false, false),
            PageFault3 => touch(file, true, false),
            TlbFlush1 => touch(file, false, true),
            TlbFlush2 => touch(None, false, true),
            TlbFlush3 => touch(file, true, true),
            Mmap1 => whole(map_unmap(None, len, 256)),
            Mmap2 => whole(map_unmap(file, len, 256)),
            Brk1 | Brk2 => whole(brk_pass(ps, 256)),
            Malloc1 => whole(malloc_pass(len, 256)),
            Malloc2 => whole(malloc_pass(1024, 4096)),
        }
    }

    fn task(
        &self,
        task: &Task,
        series: &Series,
        file: Option<&OwnedFile>,
        resume_at: usize,
    ) -> TaskReport {
        let mut r = TaskReport::default();
        if self.cfg.test.uses_file() && file.is_none() {
            r.fail("no file for this task");
            return r;
        }
        if self.cfg.test == Test::Brk2
            && let Err(e) = grow_heap(self.cfg.page_size as usize)
        {
            r.fail(&e.to_string());
            return r;
        }
        let ops = std::cell::Cell::new(0u64);
        let at = std::cell::Cell::new(resume_at);
        let pass = |r: &mut TaskReport, end| match self.pass(file, at.get(), end) {
            Ok(done) => {
                ops.set(ops.get() + done.ops);
                at.set(done.resume_at);
                true
            }
            Err(e) => {
                r.fail(&e.to_string());
                false
            }
        };
        let count = |_: &_| ops.get() as f64;
        let (used, n) = series.timed_loop(task, &mut r, self.cfg.timed, pass, count);
        r.values[V::Dirtied] = (used.oublock * 512 / self.cfg.page_size) as f64;
        r.values[V::Ops] = ops.get() as f64;
        r.values[V::Points] = n as f64;
        r.values[V::ResumeAt] = at.get() as f64;
        r
    }
}

/// Pages a touching pass goes between two looks at the clock: 4 MiB of
/// 4 KiB pages. A look cost about 1.2 us amid page_fault3's faults here
/// (2.1 % of the worker's samples at 256 pages, 0.55 % at 1024); under
/// an icount guest 1024 pages take about 0.18 s.
const PAGES_A_LOOK: u64 = 1024;

/// A pass's operation count, kept in memory and bumped as each operation
/// ends, as will-it-scale's tests bump theirs (`(*iterations)++`, a load
/// and a store a round): part of what an operation costs, about 9 % of
/// page_fault3's here (docs/wis.md, "the count bumped a page").
#[derive(Default)]
struct Ops(u64);

impl Ops {
    /// Adds `n` done; the count so far.
    #[inline(always)]
    fn bump(&mut self, n: u64) -> u64 {
        // SAFETY: our own field, valid and aligned.
        unsafe {
            let now = std::ptr::read_volatile(&self.0) + n;
            std::ptr::write_volatile(&mut self.0, now);
            now
        }
    }
}

/// What one pass did: its operations, and the page the next pass starts
/// at (0 once a touching pass reached the end of its mapping).
struct Pass {
    ops: u64,
    resume_at: usize,
}

/// One pass of the page_fault and tlb_flush tests: map, write each page
/// from page `from` on (tlb: then MADV_DONTNEED it and read it back),
/// unmap. One op per page. The pass stops early once `end` (monotonic ns)
/// passed or a stop signal came, and counts the pages it wrote: will-it-
/// scale counts every page and reads the counts each second, so its
/// figure has no pass boundary, and a 128 MiB pass can outlast a sample
/// (5.7 s at 5.8 K faults/s in a TCG guest). The unmap of what was
/// written stays in the sample.
fn touch_pass(
    file: Option<&OwnedFile>,
    shared: bool,
    len: usize,
    ps: usize,
    tlb: bool,
    from: usize,
    end: u64,
) -> Result<Pass> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = if shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    };
    let region = Region::map(len, prot, flags, file.map(|f| &f.file))?;
    let p = region.ptr();
    let mut ops = Ops::default();
    let mut resume_at = 0;
    for off in (from.saturating_mul(ps).min(len)..len).step_by(ps) {
        // SAFETY: off < len, inside our mapping.
        unsafe {
            p.add(off).write_volatile(1);
            if tlb {
                if libc::madvise(p.add(off).cast(), ps, libc::MADV_DONTNEED) != 0 {
                    return Err(Error::Failed(format!(
                        "madvise(DONTNEED) failed: {}",
                        exec::errno_text()
                    )));
                }
                // Private memory reads back zero; a shared file keeps the 1.
                let want = u8::from(shared);
                if p.add(off).read_volatile() != want {
                    return Err(Error::Failed(
                        "MADV_DONTNEED left an unexpected value".into(),
                    ));
                }
            }
        }
        if ops.bump(1) % PAGES_A_LOOK == 0 && exec::signals::past(end) {
            resume_at = (off + ps) / ps % (len / ps).max(1);
            break;
        }
    }
    Ok(Pass {
        ops: ops.0,
        resume_at,
    })
}

/// `k` map/unmap pairs without touching (mmap1/mmap2).
fn map_unmap(file: Option<&OwnedFile>, len: usize, k: u64) -> Result<u64> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let mut ops = Ops::default();
    for _ in 0..k {
        drop(Region::map(
            len,
            prot,
            libc::MAP_PRIVATE,
            file.map(|f| &f.file),
        )?);
        ops.bump(1);
    }
    Ok(ops.0)
}

/// `k` rounds of brk up one page and back: two ops each, as will-it-scale.
fn brk_pass(ps: usize, k: u64) -> Result<u64> {
    // SAFETY: sbrk(0) only reads the break.
    let base = unsafe { libc::sbrk(0) } as *mut u8;
    let mut ops = Ops::default();
    for _ in 0..k {
        // SAFETY: the break moves up one page and back to where it was; this
        // process (process mode only) allocates nothing meanwhile.
        unsafe {
            if libc::brk(base.wrapping_add(ps).cast()) != 0 || libc::brk(base.cast()) != 0 {
                return Err(Error::Failed(format!("brk failed: {}", exec::errno_text())));
            }
        }
        ops.bump(2);
    }
    Ok(ops.0)
}

/// brk2's start, once a task: the program break up one page for good, so
/// the rounds of [`brk_pass`] move the break above a page of the task's own.
fn grow_heap(ps: usize) -> Result<()> {
    // SAFETY: sbrk moves the break up; nothing of ours lies above it (brk2
    // runs in processes only).
    if unsafe { libc::sbrk(ps as libc::intptr_t) } as isize == -1 {
        return Err(Error::Failed(format!(
            "sbrk failed: {}",
            exec::errno_text()
        )));
    }
    Ok(())
}

/// `k` malloc/free pairs of `len` bytes, through the C library as
/// will-it-scale does.
fn malloc_pass(len: usize, k: u64) -> Result<u64> {
    let mut ops = Ops::default();
    for _ in 0..k {
        // SAFETY: malloc'd memory is freed once, right away.
        unsafe {
            let p = libc::malloc(len);
            if p.is_null() {
                return Err(Error::Failed(format!("malloc({len}) failed")));
            }
            std::hint::black_box(p);
            libc::free(p);
        }
        ops.bump(1);
    }
    Ok(ops.0)
}

/// The sum over CPUs of the "TLB shootdowns" line of /proc/interrupts
/// (x86); None where the kernel has no such line.
pub fn tlb_shootdowns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/interrupts").ok()?;
    parse_tlb(&text)
}

fn parse_tlb(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.trim_start().starts_with("TLB:"))?;
    let rest = line.trim_start().strip_prefix("TLB:")?;
    Some(
        rest.split_whitespace()
            .map_while(|w| w.parse::<u64>().ok())
            .sum(),
    )
}

fn summarise(
    reports: &[TaskReport],
    series: &Series,
    tlb: Option<(f64, f64)>,
) -> Result<SampleData> {
    exec::first_error(reports)?;
    let secs = |r: &TaskReport| r.end_ns.saturating_sub(r.start_ns) as f64 / 1e9;
    let rates: Vec<f64> = reports
        .iter()
        .map(|r| {
            let w = secs(r);
            if w > 0.0 { r.values[V::Ops] / w } else { 0.0 }
        })
        .collect();
    let sum = |g: &dyn Fn(&TaskReport) -> f64| reports.iter().map(g).sum::<f64>();
    let ops = sum(&|r| r.values[V::Ops]);
    let faults = sum(&|r| (r.minflt + r.majflt) as f64);
    let total: f64 = rates.iter().sum();
    let mut d = SampleData::default();
    let f = &mut d.figures;
    f.insert("ops/s".into(), total);
    f.insert("ops/s/task".into(), total / rates.len().max(1) as f64);
    f.insert("ops".into(), ops);
    f.insert("faults".into(), faults);
    // Pages of the tasks' files dirtied anew (clean or new page cache).
    f.insert("dirtied".into(), sum(&|r| r.values[V::Dirtied]));
    f.insert(
        "faults/s".into(),
        reports
            .iter()
            .map(|r| (r.minflt + r.majflt) as f64 / secs(r).max(1e-9))
            .sum(),
    );
    if ops > 0.0 {
        f.insert("faults/op".into(), faults / ops);
    }
    if let Some((n, s)) = tlb {
        f.insert("shootdowns".into(), n);
        if s > 0.0 {
            f.insert("shootdowns/s".into(), n / s);
        }
    }
    f.insert("user".into(), sum(&|r| r.user_ns as f64) / 1e9);
    f.insert("system".into(), sum(&|r| r.sys_ns as f64) / 1e9);
    f.insert("wall".into(), exec::wall_ns(reports) as f64 / 1e9);
    churn::interval_rates(f, reports, V::Points as usize, series);
    d.tasks = super::task_rows(reports, |i, r| {
        [
            ("ops/s", rates[i]),
            ("ops", r.values[V::Ops]),
            ("faults", (r.minflt + r.majflt) as f64),
        ]
    });
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt as _;

    #[test]
    fn reads_the_tlb_line_of_proc_interrupts() {
        let text = "           CPU0       CPU1\n  0:   10   0   IO-APIC   2-edge  timer\n\
                    TLB:      97162      96563   TLB shootdowns\n";
        assert_eq!(parse_tlb(text), Some(97162 + 96563));
        assert_eq!(parse_tlb("  0: 1 2 x\n"), None);
    }

    #[test]
    fn auto_runs_each_test_in_modes_it_accepts_the_brk_tests_in_processes() {
        use clap::ValueEnum as _;
        let given = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for &t in Test::value_variants() {
            let auto = modes(t, &given(&["auto"])).unwrap();
            check_modes(t, &auto).unwrap_or_else(|e| panic!("{}: {e}", t.name()));
            let brk = matches!(t, Test::Brk1 | Test::Brk2);
            assert_eq!(auto.contains(&Mode::Thread), !brk, "{}", t.name());
            assert!(auto.contains(&Mode::Process), "{}", t.name());
        }
        for t in [Test::Brk1, Test::Brk2] {
            let both = modes(t, &given(&["thread", "process"])).unwrap();
            assert!(matches!(check_modes(t, &both), Err(Error::Input(_))));
        }
        assert_eq!(
            modes(Test::Mmap1, &given(&["threads", "thread", "process"])).unwrap(),
            [Mode::Thread, Mode::Process]
        );
        assert!(matches!(
            modes(Test::Mmap1, &given(&["auto", "thread"])),
            Err(Error::Input(_))
        ));
        assert!(matches!(
            check_modes(Test::Mmap1, &[]),
            Err(Error::Input(_))
        ));
    }

    #[test]
    fn tlb_pass_reads_back_what_madvise_left() {
        let pass = touch_pass(None, false, 8 * 4096, 4096, true, 0, u64::MAX).unwrap();
        assert_eq!((pass.ops, pass.resume_at), (8, 0));
        assert_eq!(malloc_pass(1024, 3).unwrap(), 3);
        assert_eq!(map_unmap(None, 8 * 4096, 3).unwrap(), 3);
    }

    #[test]
    fn a_touching_pass_stops_at_the_end_and_counts_what_it_wrote() {
        let len = 4 * PAGES_A_LOOK as usize * 4096;
        // Past its end at the first look: one look's pages, not the pass.
        let cut = touch_pass(None, false, len, 4096, false, 0, 0).unwrap();
        assert_eq!(cut.ops, PAGES_A_LOOK);
        assert_eq!(cut.resume_at, PAGES_A_LOOK as usize);
        let whole = touch_pass(None, false, len, 4096, false, 0, u64::MAX).unwrap();
        assert_eq!((whole.ops, whole.resume_at), (4 * PAGES_A_LOOK, 0));
    }

    #[test]
    fn a_pass_cut_at_the_end_goes_on_where_it_stopped() {
        let (ps, pages) = (4096, 3 * PAGES_A_LOOK as usize);
        let f = OwnedFile::tmpfile(&std::env::temp_dir(), (pages * ps) as u64).unwrap();
        let written = || {
            let mut b = [0u8; 1];
            (0..pages)
                .filter(|&i| {
                    let n = f.file.read_at(&mut b, (i * ps) as u64).unwrap();
                    n == 1 && b[0] == 1
                })
                .collect::<Vec<_>>()
        };
        let look = PAGES_A_LOOK as usize;
        // Cut at its first look, the pass wrote only its first pages...
        let first = touch_pass(Some(&f), true, pages * ps, ps, false, 0, 0).unwrap();
        assert_eq!(first.resume_at, look);
        assert_eq!(written(), (0..look).collect::<Vec<_>>());
        // ...and the next one starts after them, not at the head again.
        let next = touch_pass(Some(&f), true, pages * ps, ps, false, first.resume_at, 0).unwrap();
        assert_eq!((next.ops, next.resume_at), (PAGES_A_LOOK, 2 * look));
        assert_eq!(written(), (0..2 * look).collect::<Vec<_>>());
        // The last stretch reaches the end: the pass after it starts at 0.
        let last = touch_pass(Some(&f), true, pages * ps, ps, false, next.resume_at, 0).unwrap();
        assert_eq!((last.ops, last.resume_at), (PAGES_A_LOOK, 0));
        assert_eq!(written(), (0..pages).collect::<Vec<_>>());
    }
}
