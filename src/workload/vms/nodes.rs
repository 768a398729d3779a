//! case-mbind (usemem_mbind) and case-migrate-across-nodes
//! (usemem_migrate): each task writes a byte to each of its pages (the
//! page's index), moves them all to one node with move_pages(2), then to
//! the other with mbind(2) (MPOL_BIND, MPOL_MF_MOVE | MPOL_MF_STRICT) or
//! migrate_pages(2), and after each move asks get_mempolicy(2) where
//! every page is and checks its byte. Bytes are the pages mapped; the
//! count is the pages found on another node than asked (usemem exits
//! there; vmscale counts them). Needs two nodes.

use super::usemem::{V, timed};
use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{Task, TaskReport};

const MPOL_BIND: libc::c_long = 2;
const MPOL_F_NODE: libc::c_long = 1;
const MPOL_F_ADDR: libc::c_long = 2;
const MPOL_MF_STRICT: libc::c_long = 1;
const MPOL_MF_MOVE: libc::c_long = 2;
const MPOL_MF_MOVE_ALL: libc::c_long = 4;

/// Longs in a node mask, and the bits the kernel is told it holds.
pub const LONGS: usize = 16;
pub const MAXNODE: libc::c_ulong = (LONGS as u32 * libc::c_ulong::BITS) as libc::c_ulong;

/// The mask of `node` alone.
pub fn mask(node: u64) -> [libc::c_ulong; LONGS] {
    let mut m = [0 as libc::c_ulong; LONGS];
    let bits = libc::c_ulong::BITS as u64;
    m[(node / bits) as usize % LONGS] = 1 << (node % bits);
    m
}

fn failed(what: &str) -> Error {
    Error::Failed(format!("{what} failed: {}", crate::exec::errno_text()))
}

/// The task's pages, each written with its index, as the programs do.
struct Pages {
    region: Region,
    count: usize,
    page: usize,
}

impl Pages {
    fn addr(&self, i: usize) -> *mut u8 {
        // SAFETY: callers pass i < count, inside the region.
        unsafe { self.region.ptr().add(i * self.page) }
    }

    /// move_pages(2) of every page to `node`.
    fn move_all(&self, node: i32, flags: libc::c_long) -> Result<()> {
        let addrs: Vec<*mut u8> = (0..self.count).map(|i| self.addr(i)).collect();
        let nodes = vec![node; self.count];
        let mut status = vec![-123i32; self.count];
        // SAFETY: three arrays of `count` entries; pid 0 is this process.
        let e = unsafe {
            libc::syscall(
                libc::SYS_move_pages,
                0,
                self.count as libc::c_ulong,
                addrs.as_ptr(),
                nodes.as_ptr(),
                status.as_mut_ptr(),
                flags,
            )
        };
        // ENOENT: some pages were not present (the program goes on too).
        let absent = std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT);
        if e < 0 && !absent {
            return Err(failed("move_pages"));
        }
        Ok(())
    }

    /// Pages not on `node` (get_mempolicy a page); fails on a page whose
    /// byte is not its index.
    fn misplaced(&self, node: i32) -> Result<u64> {
        let mut off = 0;
        for i in 0..self.count {
            let mut at: libc::c_int = -1;
            // SAFETY: `at` is writable; no mask is asked for; the address
            // is one of our pages.
            let e = unsafe {
                libc::syscall(
                    libc::SYS_get_mempolicy,
                    &mut at as *mut libc::c_int,
                    std::ptr::null_mut::<libc::c_ulong>(),
                    0 as libc::c_ulong,
                    self.addr(i),
                    MPOL_F_NODE | MPOL_F_ADDR,
                )
            };
            if e != 0 {
                return Err(failed("get_mempolicy"));
            }
            // SAFETY: i < count.
            if unsafe { self.addr(i).read_volatile() } != i as u8 {
                return Err(Error::Failed(format!("page {i}: content corrupted")));
            }
            off += u64::from(at != node);
        }
        Ok(off)
    }
}

/// `count` pages mapped (`extra` bytes more, as usemem_migrate maps a
/// byte a page more), populated or not, each written with its index.
fn pages(count: u64, page: u64, extra: u64, populate: bool) -> Result<Pages> {
    let len = (count * page + extra).max(1) as usize;
    let flags = libc::MAP_PRIVATE | if populate { libc::MAP_POPULATE } else { 0 };
    let region = Region::map(len, libc::PROT_READ | libc::PROT_WRITE, flags, None)?;
    let p = Pages {
        region,
        count: count as usize,
        page: page as usize,
    };
    for i in 0..p.count {
        // SAFETY: i < count.
        unsafe { p.addr(i).write_volatile(i as u8) };
    }
    Ok(p)
}

/// usemem_mbind: to node 0 by move_pages, bound there by mbind, then
/// bound to node 1 (moved) by mbind.
fn mbind(r: &mut TaskReport, count: u64, page: u64) -> Result<u64> {
    let p = pages(count, page, 0, false)?;
    p.move_all(0, 0)?;
    let bind = |node: u64| {
        let m = mask(node);
        // SAFETY: the range is our mapping; the mask holds MAXNODE bits.
        let e = unsafe {
            libc::syscall(
                libc::SYS_mbind,
                p.region.ptr(),
                p.count * p.page,
                MPOL_BIND,
                m.as_ptr(),
                MAXNODE,
                MPOL_MF_MOVE | MPOL_MF_STRICT,
            )
        };
        if e != 0 {
            return Err(failed(&format!("mbind to node {node}")));
        }
        Ok(())
    };
    bind(0)?;
    let mut off = p.misplaced(0)?;
    bind(1)?;
    off += p.misplaced(1)?;
    r.values[V::Count] = off as f64;
    Ok(count * page)
}

/// usemem_migrate: populated, to node 1 by move_pages (MPOL_MF_MOVE_ALL),
/// then node 1's pages to node 0 by migrate_pages.
fn migrate(r: &mut TaskReport, count: u64, page: u64) -> Result<u64> {
    let p = pages(count, page, count, true)?;
    p.move_all(1, MPOL_MF_MOVE_ALL)?;
    let mut off = p.misplaced(1)?;
    let (from, to) = (mask(1), mask(0));
    // SAFETY: both masks hold MAXNODE bits; pid 0 is this process.
    let e = unsafe {
        libc::syscall(
            libc::SYS_migrate_pages,
            0,
            MAXNODE,
            from.as_ptr(),
            to.as_ptr(),
        )
    };
    if e < 0 {
        return Err(failed("migrate_pages from node 1 to node 0"));
    }
    off += p.misplaced(0)?;
    r.values[V::Count] = off as f64;
    Ok(count * page)
}

/// One task of either case (`bind`: case-mbind) over `bytes` of pages.
pub fn task(bind: bool, bytes: u64, page: u64, t: &Task) -> TaskReport {
    timed(TaskReport::default(), t, 0, |r, _| {
        let count = bytes / page.max(1);
        let out = if bind {
            mbind(r, count, page)
        } else {
            migrate(r, count, page)
        };
        super::usemem::or_fail(r, out)
    })
}
