//! `run --profile[=HZ]`: what the kernel did during each measured sample.
//! Profiles are perf_event_open samples of the workers (`cycles` where a
//! PMU exists, `cpu-clock` otherwise) with kernel and user stacks,
//! symbolised and stored per case as folded stacks. The perf plumbing here
//! (sampler, symbols, tracefs) is shared with `locks/`; `probes.rs` runs
//! both beside a sample.

use crate::error::{Error, Result};

pub mod folded;
pub mod sampler;
pub mod symbols;
pub mod tracefs;

use std::collections::{BTreeMap, HashMap};

use perf_event::data::Sample;
use perf_event::events::{Hardware, Software};
use perf_event::{Builder, SampleFlag};

use sampler::{Recording, Sink};
use symbols::Symbols;

/// The default sampling rate. The budget is 3 % of pft's fault/wsec: on
/// the 2-CPU guest 999 Hz cost 3.1 % and 499 Hz 1.8 % (docs/profile.md,
/// bench/profile_cost.rs); perf's 4000 Hz would cost more still. An odd
/// rate avoids lockstep with the kernel tick (100 to 1000 Hz).
pub const DEFAULT_HZ: u64 = 499;
/// Deepest kernel + user stack kept.
const MAX_STACK: u16 = 64;

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

    pub fn builder(&self, hz: u64) -> Builder<'static> {
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
pub fn may_perfmon() -> bool {
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

impl StackSink {
    /// The recorded stacks, symbolised and folded.
    pub fn into_profile(self, kind: EventKind, hz: u64, symbols: &mut Symbols) -> CaseProfile {
        CaseProfile {
            event: kind.name().to_string(),
            hz,
            samples: self.samples,
            lost: self.lost,
            folded: symbols.fold(&self.stacks),
        }
    }
}

/// Opens the profile's events on every online CPU and starts recording.
pub fn start(kind: EventKind, hz: u64) -> Result<Recording<StackSink>> {
    Recording::start(
        sampler::open_per_cpu(&kind.builder(hz), 0)
            .map_err(|e| Error::Failed(format!("--profile: perf_event_open: {e}")))?,
        StackSink::default(),
    )
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
