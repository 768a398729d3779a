//! `run --profile[=HZ]` and `run --lock-stats`: what the kernel did during each
//! measured sample. Profiles are perf_event_open samples of the workers
//! (`cycles` where a PMU exists, `cpu-clock` otherwise) with kernel and user
//! stacks, symbolised and stored per case as folded stacks. The checks
//! before a run refuse what this kernel or this user cannot record.

pub mod folded;
pub mod sampler;
pub mod symbols;
pub mod tracefs;

use std::collections::{BTreeMap, HashMap};

use perf_event::data::Sample;
use perf_event::events::{Hardware, Software};
use perf_event::{Builder, SampleFlag};

use crate::locks;
use sampler::{Recording, Sink};
use symbols::Symbols;

/// The default sampling rate: perf's 4000 Hz costs more than the 3 %
/// budget on a small guest; 999 Hz avoids lockstep with the 1000 Hz tick.
pub const DEFAULT_HZ: u64 = 999;
/// Deepest kernel + user stack kept.
const MAX_STACK: u16 = 64;

/// What a run records beside each sample.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Request {
    /// Sampling rate of the profile, or no profile.
    pub hz: Option<u64>,
    pub locks: bool,
}

impl Request {
    pub fn is_empty(&self) -> bool {
        self.hz.is_none() && !self.locks
    }
}

/// The event a profile samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventKind {
    Cycles,
    CpuClock,
}

impl EventKind {
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Cycles => "cycles",
            EventKind::CpuClock => "cpu-clock",
        }
    }

    fn builder(&self, hz: u64) -> Builder<'static> {
        let mut b = match self {
            EventKind::Cycles => Builder::new(Hardware::CPU_CYCLES),
            EventKind::CpuClock => Builder::new(Software::CPU_CLOCK),
        };
        b.include_kernel()
            .sample_frequency(hz)
            .sample(SampleFlag::CALLCHAIN | SampleFlag::TID)
            .sample_max_stack(MAX_STACK);
        b
    }
}

/// `uname -r`, for messages.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_else(|_| "kernel release unknown".into())
}

/// Whether this process holds CAP_PERFMON (38) or CAP_SYS_ADMIN (21).
fn may_perfmon() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 38 | 1 << 21) != 0)
}

/// The refusal for a perf_event_paranoid value too high for what is
/// asked, if any (`needed` is the highest value that allows it).
pub fn paranoid_refusal(value: i64, needed: i64, privileged: bool, what: &str) -> Option<String> {
    (value > needed && !privileged).then(|| {
        format!(
            "{what} needs kernel.perf_event_paranoid <= {needed} (or root / CAP_PERFMON), \
             found {value}: run as root, or `sysctl kernel.perf_event_paranoid={needed}`"
        )
    })
}

/// The per-run state: the checked setup and the symbol cache.
pub struct Probes {
    profile: Option<(EventKind, u64)>,
    locks: Option<locks::Setup>,
    symbols: Symbols,
}

/// Checks that this kernel and user can record `req`; the error is the
/// refusal with the value found and the fix.
pub fn preflight(req: &Request) -> Result<Option<Probes>, String> {
    if req.is_empty() {
        return Ok(None);
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map_err(|_| {
            format!(
                "--profile/--lock-stats: /proc/sys/kernel/perf_event_paranoid is missing: this kernel \
                 ({}) has no perf events; build it with CONFIG_PERF_EVENTS=y",
                kernel_release()
            )
        })?
        .trim()
        .parse::<i64>()
        .unwrap_or(i64::MAX);
    let privileged = may_perfmon();
    let mut profile = None;
    if let Some(hz) = req.hz {
        if hz == 0 || hz > 100_000 {
            return Err(format!(
                "--profile={hz}: give a rate between 1 and 100000 samples per second"
            ));
        }
        if let Some(r) = paranoid_refusal(paranoid, 1, privileged, "--profile (kernel stacks)") {
            return Err(r);
        }
        let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        if let Some(max) = max.filter(|&m| hz > m) {
            return Err(format!(
                "--profile={hz}: kernel.perf_event_max_sample_rate is {max}: use --profile={max} \
                 or less, or raise it with `sysctl kernel.perf_event_max_sample_rate={hz}`"
            ));
        }
        let kind = [EventKind::Cycles, EventKind::CpuClock]
            .into_iter()
            .find(|k| sampler::open_per_cpu(&k.builder(hz), 0).is_ok())
            .ok_or_else(|| {
                let e = sampler::open_per_cpu(&EventKind::CpuClock.builder(hz), 0)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                format!(
                    "--profile: perf_event_open of cpu-clock with kernel callchains fails ({e}) \
                     on {}: check kernel.perf_event_paranoid and CONFIG_PERF_EVENTS",
                    kernel_release()
                )
            })?;
        profile = Some((kind, hz));
    }
    let mut lock_setup = None;
    if req.locks {
        if let Some(r) =
            paranoid_refusal(paranoid, -1, privileged, "--lock-stats (raw tracepoints)")
        {
            return Err(r);
        }
        let s = locks::setup()?;
        // Open once now so a refusal comes before anything is stored.
        locks::open(&s)?;
        if std::path::Path::new(locks::lock_stat::PATH).exists()
            && std::fs::read_to_string("/proc/sys/kernel/lock_stat").is_ok_and(|v| v.trim() == "0")
        {
            eprintln!(
                "vmscale: note: kernel.lock_stat is 0, so /proc/lock_stat counts nothing: \
                 `sysctl kernel.lock_stat=1` to record it"
            );
        }
        lock_setup = Some(s);
    }
    Ok(Some(Probes {
        profile,
        locks: lock_setup,
        symbols: Symbols::new(),
    }))
}

/// Aggregates the callchains of a profile.
#[derive(Default)]
pub struct StackSink {
    stacks: HashMap<Vec<u64>, u64>,
    samples: u64,
    lost: u64,
}

impl Sink for StackSink {
    fn sample(&mut self, _tag: usize, s: &Sample) {
        if let Some(c) = s.callchain() {
            match self.stacks.get_mut(c) {
                Some(n) => *n += 1,
                None => {
                    self.stacks.insert(c.to_vec(), 1);
                }
            }
            self.samples += 1;
        }
    }

    fn lost(&mut self, n: u64) {
        self.lost += n;
    }
}

/// One sample's profile, folded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseProfile {
    pub event: String,
    pub hz: u64,
    pub samples: u64,
    pub lost: u64,
    pub folded: BTreeMap<String, u64>,
}

/// What was recorded beside one sample.
#[derive(Debug, Default)]
pub struct Captured {
    pub profile: Option<CaseProfile>,
    pub locks: Option<Vec<locks::LockRow>>,
}

/// Recordings under way during one sample.
pub struct Active {
    profile: Option<Recording<StackSink>>,
    locks: Option<locks::Active>,
}

impl Probes {
    /// Starts recording; call just before the workload's sample.
    pub fn start(&self) -> Result<Active, String> {
        let profile = match self.profile {
            Some((kind, hz)) => Some(Recording::start(
                sampler::open_per_cpu(&kind.builder(hz), 0)
                    .map_err(|e| format!("--profile: perf_event_open: {e}"))?,
                StackSink::default(),
            )?),
            None => None,
        };
        let locks = self.locks.as_ref().map(locks::start).transpose()?;
        Ok(Active { profile, locks })
    }

    /// Stops the recordings of `active` and resolves what they hold.
    pub fn finish(&mut self, active: Active) -> Result<Captured, String> {
        let mut out = Captured::default();
        if let (Some(rec), Some((kind, hz))) = (active.profile, self.profile) {
            let sink = rec.stop()?;
            out.profile = Some(CaseProfile {
                event: kind.name().to_string(),
                hz,
                samples: sink.samples,
                lost: sink.lost,
                folded: self.symbols.fold(&sink.stacks),
            });
        }
        if let Some(l) = active.locks {
            out.locks = Some(l.finish(&mut self.symbols)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paranoid_refusal_names_the_value_and_the_fix() {
        let r = paranoid_refusal(2, 1, false, "--profile").unwrap();
        assert!(
            r.contains("found 2") && r.contains("perf_event_paranoid=1"),
            "{r}"
        );
        assert_eq!(paranoid_refusal(2, 1, true, "--profile"), None);
        assert_eq!(paranoid_refusal(1, 1, false, "--profile"), None);
        assert!(paranoid_refusal(0, -1, false, "--lock-stats").is_some());
    }
}
