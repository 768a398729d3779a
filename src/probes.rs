//! What a run records beside each sample (`run --profile`, `run
//! --lock-stats`): the checks before the run, then per sample the start and
//! finish of the kernel profile (`profile/`) and the lock statistics
//! (`locks/`). It joins the two so neither imports the other.

use crate::error::{Error, Result};
use crate::locks;
use crate::profile::sampler::{self, Recording};
use crate::profile::symbols::Symbols;
use crate::profile::{
    self, CaseProfile, EventKind, StackSink, kernel_release, may_perfmon, paranoid_refusal,
};

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

/// The per-run state: the checked setup and the symbol cache.
pub struct Probes {
    profile: Option<(EventKind, u64)>,
    locks: Option<locks::Setup>,
    symbols: Symbols,
}

/// Checks that this kernel and user can record `req`; the error is the
/// refusal with the value found and the fix.
pub fn preflight(req: &Request) -> Result<Option<Probes>> {
    if req.is_empty() {
        return Ok(None);
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map_err(|_| {
            Error::Refused(format!(
                "--profile/--lock-stats: /proc/sys/kernel/perf_event_paranoid is missing: this kernel \
                 ({}) has no perf events; build it with CONFIG_PERF_EVENTS=y",
                kernel_release()
            ))
        })?
        .trim()
        .parse::<i64>()
        .unwrap_or(i64::MAX);
    let privileged = may_perfmon();
    let mut profile = None;
    if let Some(hz) = req.hz {
        if hz == 0 || hz > 100_000 {
            return Err(Error::Input(format!(
                "--profile={hz}: give a rate between 1 and 100000 samples per second"
            )));
        }
        if let Some(r) = paranoid_refusal(paranoid, 1, privileged, "--profile (kernel stacks)") {
            return Err(Error::Refused(r));
        }
        let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        if let Some(max) = max.filter(|&m| hz > m) {
            return Err(Error::Refused(format!(
                "--profile={hz}: kernel.perf_event_max_sample_rate is {max}: use --profile={max} \
                 or less, or raise it with `sysctl kernel.perf_event_max_sample_rate={hz}`"
            )));
        }
        let kind = [EventKind::Cycles, EventKind::CpuClock]
            .into_iter()
            .find(|k| sampler::open_per_cpu(&k.builder(hz), 0).is_ok())
            .ok_or_else(|| {
                let e = sampler::open_per_cpu(&EventKind::CpuClock.builder(hz), 0)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                Error::Refused(format!(
                    "--profile: perf_event_open of cpu-clock with kernel callchains fails ({e}) \
                     on {}: check kernel.perf_event_paranoid and CONFIG_PERF_EVENTS",
                    kernel_release()
                ))
            })?;
        profile = Some((kind, hz));
    }
    let mut lock_setup = None;
    if req.locks {
        if let Some(r) =
            paranoid_refusal(paranoid, -1, privileged, "--lock-stats (raw tracepoints)")
        {
            return Err(Error::Refused(r));
        }
        let s = locks::setup().map_err(Error::refusal)?;
        // Open once now so a refusal comes before anything is stored.
        locks::open(&s).map_err(Error::refusal)?;
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
    pub fn start(&self) -> Result<Active> {
        let profile = match self.profile {
            Some((kind, hz)) => Some(profile::start(kind, hz)?),
            None => None,
        };
        let locks = self.locks.as_ref().map(locks::start).transpose()?;
        Ok(Active { profile, locks })
    }

    /// Stops the recordings of `active` and resolves what they hold.
    pub fn finish(&mut self, active: Active) -> Result<Captured> {
        let mut out = Captured::default();
        if let (Some(rec), Some((kind, hz))) = (active.profile, self.profile) {
            out.profile = Some(rec.stop()?.into_profile(kind, hz, &mut self.symbols));
        }
        if let Some(l) = active.locks {
            out.locks = Some(l.finish(&mut self.symbols)?);
        }
        Ok(out)
    }
}
