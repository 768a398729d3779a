//! Anonymous shared memory that survives fork: the barrier and the task
//! reports live here so threads and processes use one code path.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use super::TaskReport;
use super::region::Region;

/// The shared page(s): barrier counters followed by one report per task.
#[repr(C)]
struct Header {
    arrived: AtomicU32,
    go: AtomicU32,
    /// The process that made the block and releases the tasks.
    owner: AtomicI32,
}

pub struct SharedBlock {
    mem: Region,
    tasks: usize,
}

impl SharedBlock {
    pub fn new(tasks: usize) -> std::io::Result<SharedBlock> {
        let len = std::mem::size_of::<Header>().next_multiple_of(64)
            + tasks * std::mem::size_of::<TaskReport>();
        let mem = Region::raw(
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
        )?;
        let block = SharedBlock { mem, tasks };
        // SAFETY: getpid cannot fail.
        let me = unsafe { libc::getpid() };
        block.header().owner.store(me, Ordering::Release);
        for i in 0..tasks {
            // SAFETY: slot i is inside the mapping and properly aligned (f64/u64 fields, 64-byte header).
            unsafe { block.slot_ptr(i).write(TaskReport::default()) };
        }
        Ok(block)
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a zero-initialised Header (anonymous memory is zeroed).
        unsafe { &*(self.mem.ptr() as *const Header) }
    }

    fn slot_ptr(&self, i: usize) -> *mut TaskReport {
        assert!(i < self.tasks);
        let off = std::mem::size_of::<Header>().next_multiple_of(64)
            + i * std::mem::size_of::<TaskReport>();
        // SAFETY: off is within the mapping by construction.
        unsafe { self.mem.ptr().add(off) as *mut TaskReport }
    }

    /// Stores task i's report (each task writes only its own slot).
    pub fn put(&self, i: usize, report: TaskReport) {
        // SAFETY: slot i is valid; only task i writes it.
        unsafe { self.slot_ptr(i).write_volatile(report) };
    }

    /// Reads task i's report after the task has finished.
    pub fn get(&self, i: usize) -> TaskReport {
        // SAFETY: slot i is valid and initialised in new().
        unsafe { self.slot_ptr(i).read_volatile() }
    }

    /// A task announces that it is ready (or finished early).
    pub fn arrive(&self) {
        self.header().arrived.fetch_add(1, Ordering::AcqRel);
    }

    pub fn arrived(&self) -> u32 {
        self.header().arrived.load(Ordering::Acquire)
    }

    /// Releases every waiting task.
    pub fn release(&self) {
        self.header().go.store(1, Ordering::Release);
    }

    /// Waits for release. Spins briefly, then yields so that more tasks
    /// than CPUs still make progress. A forked task whose owner died leaves:
    /// PR_SET_PDEATHSIG alone can miss a parent that dies while the child
    /// is still setting it up, and nobody would ever release this one.
    pub fn wait_release(&self) {
        let mut spins = 0u32;
        while self.header().go.load(Ordering::Acquire) == 0 {
            if spins < 1000 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
                if spins.is_multiple_of(64) && self.owner_gone() {
                    // SAFETY: leave a forked child without running destructors.
                    unsafe { libc::_exit(1) };
                }
            }
            spins = spins.wrapping_add(1);
        }
    }

    /// In a forked task: the owner is no longer this process's parent.
    fn owner_gone(&self) -> bool {
        let owner = self.header().owner.load(Ordering::Acquire);
        // SAFETY: getpid and getppid cannot fail.
        let (me, parent) = unsafe { (libc::getpid(), libc::getppid()) };
        me != owner && parent != owner
    }
}
