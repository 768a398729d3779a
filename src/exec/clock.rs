//! Clocks and resource usage read by tasks around their timed sections.

/// Nanoseconds on CLOCK_MONOTONIC: one system-wide clock, so starts and ends
/// taken in different processes can be set against each other.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU times and fault counts of one task at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub minflt: u64,
    pub majflt: u64,
    /// Bytes written, in 512-byte blocks: this counts a page of a file
    /// when the task first dirties it, also through a shared mapping.
    pub oublock: u64,
}

impl Usage {
    /// Usage accumulated since `earlier`.
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            minflt: self.minflt.saturating_sub(earlier.minflt),
            majflt: self.majflt.saturating_sub(earlier.majflt),
            oublock: self.oublock.saturating_sub(earlier.oublock),
        }
    }
}

/// Whose usage to read: the calling thread, the calling process, or its
/// waited-for children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    Thread,
    Process,
    Children,
}

/// getrusage for `who`.
pub fn usage(who: Who) -> Usage {
    let which = match who {
        Who::Thread => libc::RUSAGE_THREAD,
        Who::Process => libc::RUSAGE_SELF,
        Who::Children => libc::RUSAGE_CHILDREN,
    };
    // SAFETY: rusage is plain old data; zeroed is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is valid and writable; `which` is one of the defined constants.
    unsafe { libc::getrusage(which, &mut ru) };
    from_rusage(&ru)
}

/// Converts the kernel's rusage into nanoseconds and counts.
pub fn from_rusage(ru: &libc::rusage) -> Usage {
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    Usage {
        user_ns: tv(ru.ru_utime),
        sys_ns: tv(ru.ru_stime),
        minflt: ru.ru_minflt as u64,
        majflt: ru.ru_majflt as u64,
        oublock: ru.ru_oublock as u64,
    }
}

/// CPU seconds and faults of this process and of the children it waited
/// for: all vmscale did, its tasks (or its QEMU) included.
pub fn own_usage() -> (f64, f64) {
    let (p, c) = (usage(Who::Process), usage(Who::Children));
    (
        (p.user_ns + p.sys_ns + c.user_ns + c.sys_ns) as f64 / 1e9,
        (p.minflt + p.majflt + c.minflt + c.majflt) as f64,
    )
}

/// The kernel's USER_HZ: the unit of /proc/stat's CPU times (100 if unknown).
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a configuration value; no pointers involved.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

/// The largest resident set of any waited-for child so far, in KiB
/// (getrusage's ru_maxrss): what benchmarks report as a command's peak.
pub fn children_peak_rss_kib() -> u64 {
    // SAFETY: rusage is plain old data; zeroed is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is valid and writable; RUSAGE_CHILDREN is defined.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    ru.ru_maxrss.max(0) as u64
}
