//! `run --lock-stats`: lock contention and mmap_lock tracepoints recorded
//! through perf events beside each sample (lock:contention_begin/end,
//! mmap_lock:*), plus /proc/lock_stat deltas where the kernel has them.

use crate::error::{Error, Result};

pub mod lock_stat;
pub mod pairing;

use std::collections::HashMap;

use perf_event::data::Sample;
use perf_event::events::Tracepoint;
use perf_event::{Builder, SampleFlag, Sampler};

use crate::profile::sampler::{self, Recording, Sink};
use crate::profile::symbols::Symbols;
use crate::profile::tracefs::{self, Field};
pub use pairing::LockRow;
use pairing::{Event, Kind};

/// The tracepoints recorded, in tag order.
const TRACEPOINTS: [&str; 4] = [
    "lock/contention_begin",
    "lock/contention_end",
    "mmap_lock/mmap_lock_start_locking",
    "mmap_lock/mmap_lock_acquire_returned",
];

/// Tracepoint ids and the raw-record fields read from each.
#[derive(Debug, Clone)]
pub struct Setup {
    ids: [u64; 4],
    flags: Field,
    start_write: Field,
    acq_write: Field,
    acq_success: Field,
    /// tracefs had to be mounted (privately) to read the ids.
    pub mounted: bool,
}

/// Reads the tracepoints' ids and formats; refuses with the fix when one
/// is missing.
pub fn setup() -> Result<Setup> {
    let mut rel: Vec<String> = TRACEPOINTS.iter().map(|t| format!("{t}/id")).collect();
    rel.extend(TRACEPOINTS.iter().map(|t| format!("{t}/format")));
    let (files, mounted) = tracefs::read_event_files(&rel)?;
    let mut ids = [0u64; 4];
    for (i, t) in TRACEPOINTS.iter().enumerate() {
        let id = files[i].as_deref().and_then(|s| s.trim().parse().ok());
        ids[i] = id.ok_or_else(|| {
            Error::Refused(format!(
                "--lock-stats: the tracepoint {} is missing from this kernel ({}): {}",
                t.replace('/', ":"),
                crate::profile::kernel_release(),
                if t.starts_with("lock/") {
                    "lock:contention_begin/end need Linux 5.19 or later with CONFIG_TRACEPOINTS"
                } else {
                    "mmap_lock tracepoints need Linux 5.10 or later with CONFIG_TRACING"
                }
            ))
        })?;
    }
    let format = |i: usize| files[4 + i].clone().unwrap_or_default();
    let need = |i: usize, name: &str| {
        tracefs::field(&format(i), name).ok_or_else(|| {
            Error::Refused(format!(
                "--lock-stats: {} has no field {name} in its format: this kernel's tracepoint \
                 differs from the one vmscale reads",
                TRACEPOINTS[i].replace('/', ":")
            ))
        })
    };
    Ok(Setup {
        ids,
        flags: need(0, "flags")?,
        start_write: need(2, "write")?,
        acq_write: need(3, "write")?,
        acq_success: need(3, "success")?,
        mounted,
    })
}

/// Opens one sampler per tracepoint and CPU (every hit recorded).
pub fn open(s: &Setup) -> Result<Vec<(usize, Sampler)>> {
    let mut out = Vec::new();
    for (tag, id) in s.ids.iter().enumerate() {
        let mut b = Builder::new(Tracepoint::with_id(*id));
        b.include_kernel().sample_period(1);
        let mut flags = SampleFlag::TID | SampleFlag::TIME | SampleFlag::RAW;
        if tag == 0 {
            flags |= SampleFlag::CALLCHAIN;
            b.sample_max_stack(12);
        }
        b.sample(flags);
        out.extend(sampler::open_per_cpu(&b, tag).map_err(|e| {
            Error::Failed(format!(
                "--lock-stats: cannot open {}: {e}",
                TRACEPOINTS[tag].replace('/', ":")
            ))
        })?);
    }
    Ok(out)
}

/// Collects raw tracepoint hits; callers are resolved after the sample.
pub struct LockSink {
    setup: Setup,
    events: Vec<(u64, u32, usize, Vec<u8>, usize)>,
    chains: Vec<Vec<u64>>,
    chain_ids: HashMap<Vec<u64>, usize>,
    pub lost: u64,
}

impl LockSink {
    pub fn new(setup: Setup) -> LockSink {
        LockSink {
            setup,
            events: Vec::new(),
            chains: Vec::new(),
            chain_ids: HashMap::new(),
            lost: 0,
        }
    }

    /// The lock rows of what was recorded.
    pub fn rows(self, symbols: &mut Symbols) -> Vec<LockRow> {
        let names = symbols.kernel_names(&self.chains);
        let callers: Vec<String> = names
            .iter()
            .map(|n| {
                n.iter()
                    .find(|f| !pairing::is_lock_primitive(f))
                    .cloned()
                    .unwrap_or_else(|| "[unknown]".into())
            })
            .collect();
        let s = &self.setup;
        let get = |raw: &[u8], f: Field| tracefs::read_u64(raw, f).unwrap_or(0);
        let events = self
            .events
            .iter()
            .map(|(time_ns, tid, tag, raw, chain)| Event {
                time_ns: *time_ns,
                tid: *tid,
                kind: match tag {
                    0 => Kind::Begin {
                        flags: get(raw, s.flags),
                        caller: callers.get(*chain).cloned().unwrap_or_default(),
                    },
                    1 => Kind::End,
                    2 => Kind::Start {
                        write: get(raw, s.start_write) != 0,
                    },
                    _ => Kind::Acquired {
                        write: get(raw, s.acq_write) != 0,
                        success: get(raw, s.acq_success) != 0,
                    },
                },
            })
            .collect();
        pairing::rows(events)
    }
}

impl Sink for LockSink {
    fn sample(&mut self, tag: usize, s: &Sample) {
        let raw = if tag == 1 {
            Vec::new()
        } else {
            s.raw().unwrap_or_default().to_vec()
        };
        let chain = match s.callchain() {
            Some(c) if tag == 0 => {
                let next = self.chains.len();
                let id = *self.chain_ids.entry(c.to_vec()).or_insert(next);
                if id == next {
                    self.chains.push(c.to_vec());
                }
                id
            }
            _ => usize::MAX,
        };
        let (time, tid) = (s.time().unwrap_or(0), s.tid().unwrap_or(0));
        self.events.push((time, tid, tag, raw, chain));
    }

    fn lost(&mut self, n: u64) {
        self.lost += n;
    }
}

/// A lock recording under way.
pub struct Active {
    recording: Recording<LockSink>,
    lock_stat: Option<std::collections::BTreeMap<String, lock_stat::Class>>,
}

pub fn start(setup: &Setup) -> Result<Active> {
    let lock_stat = lock_stat::read();
    let recording = Recording::start(open(setup)?, LockSink::new(setup.clone()))?;
    Ok(Active {
        recording,
        lock_stat,
    })
}

impl Active {
    /// The rows of the sample; events lost by the kernel are a row of
    /// their own so a short count is never silent.
    pub fn finish(self, symbols: &mut Symbols) -> Result<Vec<LockRow>> {
        let sink = self.recording.stop()?;
        let after = lock_stat::read();
        let lost = sink.lost;
        let mut rows = sink.rows(symbols);
        if let (Some(b), Some(a)) = (&self.lock_stat, &after) {
            rows.extend(lock_stat::delta(b, a));
        }
        if lost > 0 {
            rows.push(LockRow {
                source: "lost".into(),
                name: "events lost (ring full)".into(),
                acquisitions: lost,
                ..LockRow::default()
            });
        }
        Ok(rows)
    }
}
