//! case-migrate: a populated mapping whose pages are moved from node to
//! node (node i to node i+1, round and round) with migrate_pages(2) until
//! the runtime is up, as the script runs `migratepages`; the figure is the
//! bytes the kernel moved per second, KB/s, from /proc/vmstat's
//! pgmigrate_success (the script counts each call as a whole mapping
//! moved). Needs two nodes or more.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{clock, signals};
use crate::monitor::vmstat;

use super::nodes::{MAXNODE, mask};

/// The kernel's count of pages migrated so far.
fn migrated() -> u64 {
    vmstat::read_live()
        .get("pgmigrate_success")
        .copied()
        .unwrap_or(0)
}

pub fn sample(nodes: u64, bytes: u64, page: u64, runtime_ns: u64) -> Result<BTreeMap<String, f64>> {
    if nodes < 2 {
        return Err(Error::Refused(
            "migrate needs two NUMA nodes or more".into(),
        ));
    }
    let region = Region::map(
        bytes as usize,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE,
        None,
    )?;
    let maxnode = MAXNODE;
    // Interleaved over every node, as the script's numactl --interleave=all.
    let mut all = [0 as libc::c_ulong; 16];
    for n in 0..nodes {
        all[(n / libc::c_ulong::BITS as u64) as usize % 16] |=
            1 << (n % libc::c_ulong::BITS as u64);
    }
    const MPOL_INTERLEAVE: libc::c_long = 3;
    // SAFETY: the range is our own mapping; the mask holds maxnode bits.
    let bound = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            region.ptr(),
            region.len(),
            MPOL_INTERLEAVE,
            all.as_ptr(),
            maxnode,
            0,
        )
    };
    if bound != 0 {
        return Err(Error::Failed(format!(
            "mbind(MPOL_INTERLEAVE) failed: {}",
            crate::exec::errno_text()
        )));
    }
    for off in (0..region.len()).step_by(4096) {
        // SAFETY: off < len, inside the mapping.
        unsafe { region.ptr().add(off).write_volatile(1) };
    }
    let moved0 = migrated();
    let t0 = clock::monotonic_ns();
    let deadline = t0.saturating_add(runtime_ns);
    let (mut moves, mut pages) = (0u64, 0u64);
    'outer: loop {
        for i in 0..nodes {
            let (from, to) = (mask(i), mask((i + 1) % nodes));
            // SAFETY: both masks hold maxnode bits; pid 0 is this process.
            let left = unsafe {
                libc::syscall(
                    libc::SYS_migrate_pages,
                    0,
                    maxnode,
                    from.as_ptr(),
                    to.as_ptr(),
                )
            };
            if left < 0 {
                return Err(Error::Failed(format!(
                    "migrate_pages failed: {}",
                    crate::exec::errno_text()
                )));
            }
            moves += 1;
            pages += left as u64;
            if signals::past(deadline) {
                break 'outer;
            }
        }
    }
    let secs = (clock::monotonic_ns() - t0) as f64 / 1e9;
    let moved = migrated().saturating_sub(moved0);
    if moved == 0 {
        return Err(Error::Failed(format!(
            "{moves} migrate_pages calls moved no page (pgmigrate_success did not \
             change): is CONFIG_MIGRATION set?"
        )));
    }
    let mut out = BTreeMap::new();
    out.insert("throughput".into(), (moved * page) as f64 / 1024.0 / secs);
    out.insert("wall".into(), secs);
    out.insert("migrate.calls".into(), moves as f64);
    out.insert("migrate.pages".into(), moved as f64);
    out.insert("migrate.not_moved".into(), pages as f64);
    Ok(out)
}
