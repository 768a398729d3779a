//! case-swapin: each task writes its anonymous memory (untimed) and
//! pushes it out to swap, and once all have, all read their memory back:
//! the timed read swaps it in. The script pushes by writing twice more
//! memory than is left (two `usemem $pushsize`); vmscale asks the kernel
//! to reclaim the written pages (MADV_PAGEOUT), which puts the same pages
//! in swap for a third of the work (docs/vms.md), and pushes as the
//! script does on a kernel without that advice.

use std::sync::atomic::Ordering;

use crate::exec::region::Region;
use crate::exec::{Task, TaskReport};

use super::usemem::timed;
use super::words::{self, Access, Rand48, Walk};

fn write_all(r: &Region) {
    let words = r.len() / 8;
    let p: *mut u64 = r.ptr().cast();
    for i in 0..words {
        // SAFETY: i < words, inside the mapping.
        unsafe { std::ptr::write_volatile(p.add(i), i as u64) };
    }
}

fn anon(len: u64) -> crate::error::Result<Region> {
    Region::map(
        len as usize,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE,
        None,
    )
}

/// One task: `written` (shared by all tasks) counts those done writing;
/// on a kernel without MADV_PAGEOUT task 0 pushes `push` bytes twice
/// once all `tasks` have.
pub fn task(
    per_task: u64,
    push: u64,
    tasks: usize,
    written: &Region,
    t: &Task,
    runtime_ns: u64,
    access: Access,
) -> TaskReport {
    let mut r = TaskReport::default();
    let written_out = anon(per_task).and_then(|m| {
        write_all(&m);
        let out = m.page_out()?;
        Ok((m, out))
    });
    // Counted also on failure, so that task 0 never waits for a task gone.
    let count = written.u32_at(0);
    count.fetch_add(1, Ordering::SeqCst);
    let (mem, paged_out) = match written_out {
        Ok(m) => m,
        Err(e) => {
            r.fail(&e.to_string());
            return r;
        }
    };
    if t.index == 0 && !paged_out {
        while (count.load(Ordering::SeqCst) as usize) < tasks {
            std::thread::yield_now();
        }
        for _ in 0..2 {
            match anon(push) {
                Ok(p) => write_all(&p),
                Err(e) => r.fail(&format!("pushing memory out: {e}")),
            }
        }
    }
    // usemem -W's read after the signal: in order, every word.
    let walk = Walk {
        access,
        read: true,
        random: false,
        check_mask: 0xffff,
    };
    timed(r, t, runtime_ns, |_, deadline| {
        let mut unused = Rand48::new(0);
        // SAFETY: mem is mapped readable and writable for this call.
        unsafe {
            words::pass(
                mem.ptr().cast(),
                mem.len() / 8,
                &walk,
                &mut unused,
                deadline,
            )
        }
    })
}
