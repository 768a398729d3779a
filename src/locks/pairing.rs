//! Turns a time-ordered stream of lock tracepoint events into lockmeter
//! rows: contentions and wait times per lock class and caller (from
//! lock:contention_begin/end), and mmap_lock acquisitions, contended
//! acquisitions and time to acquire (from the mmap_lock tracepoints).

use std::collections::{BTreeMap, HashMap};

/// One tracepoint hit, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// lock:contention_begin: the lock kind flags and the waiting caller.
    Begin { flags: u64, caller: String },
    /// lock:contention_end.
    End,
    /// mmap_lock:mmap_lock_start_locking.
    Start { write: bool },
    /// mmap_lock:mmap_lock_acquire_returned.
    Acquired { write: bool, success: bool },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub time_ns: u64,
    pub tid: u32,
    pub kind: Kind,
}

/// One row of the lock table.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct LockRow {
    /// "contention", "mmap_lock" or "lock_stat".
    pub source: String,
    pub name: String,
    pub acquisitions: u64,
    pub contended: u64,
    pub wait_ns: u64,
    pub max_wait_ns: u64,
}

/// The kernel's LCB_F_* flags of lock:contention_begin, as a class name.
pub fn class(flags: u64) -> &'static str {
    const SPIN: u64 = 1;
    const READ: u64 = 2;
    const WRITE: u64 = 4;
    const RT: u64 = 8;
    const PERCPU: u64 = 16;
    const MUTEX: u64 = 32;
    match flags {
        f if f & SPIN != 0 && f & READ != 0 => "rwlock-r",
        f if f & SPIN != 0 && f & WRITE != 0 => "rwlock-w",
        f if f & SPIN != 0 => "spinlock",
        f if f & RT != 0 => "rtmutex",
        f if f & MUTEX != 0 => "mutex",
        f if f & PERCPU != 0 && f & WRITE != 0 => "percpu-rwsem-w",
        f if f & PERCPU != 0 => "percpu-rwsem-r",
        f if f & WRITE != 0 => "rwsem-w",
        f if f & READ != 0 => "rwsem-r",
        _ => "lock",
    }
}

#[derive(Default)]
struct Waits {
    begin: Option<(u64, String)>,
    mmap: Option<(u64, bool)>,
}

/// The rows of `events` (sorted here by time).
pub fn rows(mut events: Vec<Event>) -> Vec<LockRow> {
    events.sort_by_key(|e| e.time_ns);
    let mut by_tid: HashMap<u32, Waits> = HashMap::new();
    let mut out: BTreeMap<(String, String), LockRow> = BTreeMap::new();
    for e in events {
        let w = by_tid.entry(e.tid).or_default();
        match e.kind {
            Kind::Begin { flags, caller } => {
                w.begin = Some((e.time_ns, format!("{} {caller}", class(flags))));
                if let Some((_, contended)) = w.mmap.as_mut() {
                    *contended = true;
                }
            }
            Kind::End => {
                if let Some((t0, name)) = w.begin.take() {
                    let r = row(&mut out, "contention", name);
                    let wait = e.time_ns.saturating_sub(t0);
                    r.acquisitions += 1;
                    r.contended += 1;
                    r.wait_ns += wait;
                    r.max_wait_ns = r.max_wait_ns.max(wait);
                }
            }
            Kind::Start { .. } => w.mmap = Some((e.time_ns, false)),
            Kind::Acquired { write, success } => {
                let started = w.mmap.take();
                if !success {
                    continue;
                }
                let r = row(
                    &mut out,
                    "mmap_lock",
                    format!("mmap_lock-{}", if write { "w" } else { "r" }),
                );
                r.acquisitions += 1;
                if let Some((t0, contended)) = started {
                    let wait = e.time_ns.saturating_sub(t0);
                    r.contended += contended as u64;
                    r.wait_ns += wait;
                    r.max_wait_ns = r.max_wait_ns.max(wait);
                }
            }
        }
    }
    out.into_values().collect()
}

fn row<'a>(
    out: &'a mut BTreeMap<(String, String), LockRow>,
    source: &str,
    name: String,
) -> &'a mut LockRow {
    out.entry((source.to_string(), name.clone()))
        .or_insert_with(|| LockRow {
            source: source.to_string(),
            name,
            ..LockRow::default()
        })
}

/// Whether a kernel function is a lock primitive rather than its caller.
pub fn is_lock_primitive(name: &str) -> bool {
    let n = name.trim_start_matches('_');
    [
        "raw_spin",
        "raw_read",
        "raw_write",
        "queued_",
        "rwsem",
        "mutex",
        "down_",
        "rt_",
        "percpu_down",
        "lock_",
    ]
    .iter()
    .any(|p| n.starts_with(p))
        || n.contains("slowpath")
        || n.starts_with("mmap_read_lock")
        || n.starts_with("mmap_write_lock")
        || n.starts_with("perf_")
        || n.starts_with("trace_")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, tid: u32, kind: Kind) -> Event {
        Event {
            time_ns: t,
            tid,
            kind,
        }
    }

    #[test]
    fn waits_pair_per_task_and_mmap_lock_contention_is_seen_inside_an_acquire() {
        let caller = || "do_user_addr_fault".to_string();
        let events = vec![
            ev(100, 1, Kind::Start { write: false }),
            ev(
                110,
                2,
                Kind::Begin {
                    flags: 1,
                    caller: "zone_lock".into(),
                },
            ),
            ev(
                120,
                1,
                Kind::Begin {
                    flags: 2,
                    caller: caller(),
                },
            ),
            ev(150, 2, Kind::End),
            ev(400, 1, Kind::End),
            ev(
                410,
                1,
                Kind::Acquired {
                    write: false,
                    success: true,
                },
            ),
            ev(
                500,
                2,
                Kind::Acquired {
                    write: true,
                    success: true,
                },
            ),
            ev(600, 2, Kind::Start { write: true }),
            ev(
                601,
                2,
                Kind::Acquired {
                    write: true,
                    success: false,
                },
            ),
        ];
        let r = rows(events);
        let get = |n: &str| r.iter().find(|x| x.name == n).unwrap().clone();
        let read = get("mmap_lock-r");
        assert_eq!(
            (read.acquisitions, read.contended, read.wait_ns),
            (1, 1, 310)
        );
        // A trylock (no start) counts but has no wait; a failed one is not
        // an acquisition.
        let write = get("mmap_lock-w");
        assert_eq!(
            (write.acquisitions, write.contended, write.wait_ns),
            (1, 0, 0)
        );
        let rw = get("rwsem-r do_user_addr_fault");
        assert_eq!((rw.contended, rw.wait_ns, rw.max_wait_ns), (1, 280, 280));
        assert_eq!(get("spinlock zone_lock").wait_ns, 40);
    }

    #[test]
    fn primitives_are_skipped_for_the_caller() {
        assert!(is_lock_primitive("queued_spin_lock_slowpath"));
        assert!(is_lock_primitive("_raw_spin_lock_irqsave"));
        assert!(is_lock_primitive("rwsem_down_read_slowpath"));
        assert!(!is_lock_primitive("do_user_addr_fault"));
        assert!(!is_lock_primitive("free_pcppages_bulk"));
    }
}
