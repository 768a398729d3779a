//! perf_event_open sampling of this process and every task it starts
//! (threads and forked children inherit the events, so the workers and a
//! `cmd` child are covered), one ring buffer per online CPU, drained by a
//! thread while the workload runs so a long sample loses nothing.

use crate::error::{Error, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use perf_event::data::{Record, Sample};
use perf_event::{Builder, Sampler};

/// Each CPU's ring buffer (data part), drained every `DRAIN_EVERY`: at
/// 999 Hz and ~600 bytes a record a CPU fills 512 KiB in about 0.8 s, so
/// nothing is lost while the drain thread wakes seldom (it shares the
/// CPUs with the workers).
const RING_BYTES: usize = 512 << 10;
const DRAIN_EVERY: Duration = Duration::from_millis(100);

/// Receives the samples of a recording, on the drain thread.
pub trait Sink: Send + 'static {
    /// One sample of the event tagged `tag` (the index it was opened with).
    fn sample(&mut self, tag: usize, s: &Sample);
    /// The kernel dropped `n` records (ring full).
    fn lost(&mut self, n: u64);
}

/// This machine's online CPUs (the live sysfs, whatever machine root is
/// set: the events open here); CPU 0 alone if unreadable.
pub fn online_cpus() -> Vec<usize> {
    let online = crate::machine::topology::online_cpus(std::path::Path::new("/"));
    if online.is_empty() { vec![0] } else { online }
}

/// Opens `builder` once per online CPU on this process, inherited by the
/// tasks it creates; each sampler is tagged `tag`.
pub fn open_per_cpu(builder: &Builder, tag: usize) -> std::io::Result<Vec<(usize, Sampler)>> {
    let mut out = Vec::new();
    for cpu in online_cpus() {
        let mut b = builder.clone();
        b.observe_self().one_cpu(cpu).inherit(true);
        out.push((tag, b.build()?.sampled(RING_BYTES)?));
    }
    Ok(out)
}

/// A recording under way: the events are enabled until `stop`.
pub struct Recording<S: Sink> {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<S>>>,
}

/// A recording dropped without `stop` (the sample failed) still ends its
/// thread, which disables the events.
impl<S: Sink> Drop for Recording<S> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

impl<S: Sink> Recording<S> {
    /// Enables every sampler and starts draining them into `sink`.
    pub fn start(mut samplers: Vec<(usize, Sampler)>, sink: S) -> Result<Recording<S>> {
        for (_, s) in samplers.iter_mut() {
            s.enable()
                .map_err(|e| Error::Failed(format!("perf event enable: {e}")))?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("vmscale-perf".into())
            .spawn(move || drain_until(samplers, sink, &flag))
            .map_err(|e| Error::Failed(format!("cannot start the perf drain thread: {e}")))?;
        Ok(Recording {
            stop,
            handle: Some(handle),
        })
    }

    /// Disables the events, drains what is left and returns the sink.
    pub fn stop(mut self) -> Result<S> {
        self.stop.store(true, Ordering::Release);
        self.handle
            .take()
            .ok_or_else(|| Error::Failed("the perf recording was already stopped".into()))?
            .join()
            .map_err(|_| Error::Failed("the perf drain thread panicked".into()))?
    }
}

fn drain_until<S: Sink>(
    mut samplers: Vec<(usize, Sampler)>,
    mut sink: S,
    stop: &AtomicBool,
) -> Result<S> {
    loop {
        let last = stop.load(Ordering::Acquire);
        if last {
            for (_, s) in samplers.iter_mut() {
                s.disable()
                    .map_err(|e| Error::Failed(format!("perf event disable: {e}")))?;
            }
        }
        for (tag, s) in samplers.iter_mut() {
            drain(*tag, s, &mut sink);
        }
        if last {
            return Ok(sink);
        }
        std::thread::sleep(DRAIN_EVERY);
    }
}

fn drain<S: Sink>(tag: usize, sampler: &mut Sampler, sink: &mut S) {
    while let Some(rec) = sampler.next_record() {
        match rec.parse_record() {
            Ok(Record::Sample(s)) => sink.sample(tag, &s),
            Ok(Record::Lost(l)) => sink.lost(l.lost),
            _ => {}
        }
    }
}
