//! One sample and what is measured around it: an optional wait for a
//! quiet machine, vmstat deltas, the CPU time others used meanwhile and
//! memory the machine gained (the noise flag), the profile and lock
//! recording beside it, and the /proc/meminfo levels during it
//! (`--meminfo`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::Options;
use crate::error::Result;
use crate::exec::clock;
use crate::model::{Case, Sample};
use crate::monitor::{meminfo, memory_size, stat, vmstat};
use crate::workload::Workload;

/// Takes sample `seq` of `case`, a warm-up one or measured, its samples
/// tagged with `invocation` when a run has more than one.
pub fn take(
    workload: &dyn Workload,
    case: &Case,
    seq: i64,
    warmup: bool,
    opts: &Options,
    invocation: Option<usize>,
    probes: Option<&mut crate::probes::Probes>,
) -> Result<(Sample, crate::probes::Captured)> {
    let root_buf = crate::machine::root();
    let root = root_buf.as_path();
    let mut noise = BTreeMap::new();
    if let Some(i) = invocation {
        noise.insert(crate::stats::levels::INVOCATION.to_string(), i as f64);
    }
    if let Some(limit) = opts.wait_quiet {
        let (waited, quiet) = stat::wait_quiet(
            root,
            opts.noise_threshold,
            Duration::from_millis(200),
            limit,
        );
        noise.insert("quiet_wait_s".to_string(), waited.as_secs_f64());
        noise.insert("quiet".to_string(), if quiet { 1.0 } else { 0.0 });
    }
    let mem0 = memory_size::read(root);
    let (_, faults0) = clock::own_usage();
    let before = crate::monitor::counters(root);
    let cpu0 = stat::read(root);
    let (own0, _) = clock::own_usage();
    let active = probes.as_ref().map(|p| p.start()).transpose()?;
    let levels = (!opts.meminfo.is_empty())
        .then(|| meminfo::start(root, &opts.meminfo, meminfo::PERIOD))
        .transpose()?;
    let t0 = Instant::now();
    let mut data = workload.sample(case).map_err(|e| {
        e.context(format!(
            "{} {} with {} tasks",
            workload.name(),
            case.variant,
            case.tasks
        ))
    })?;
    let wall = t0.elapsed().as_secs_f64();
    data.figures
        .extend(levels.map(meminfo::Sampler::finish).unwrap_or_default());
    let own = clock::own_usage().0 - own0;
    let cpu1 = stat::read(root);
    let after = crate::monitor::counters(root);
    noise.insert(
        vmstat::OWN_FAULTS.to_string(),
        clock::own_usage().1 - faults0,
    );
    let mem1 = memory_size::read(root);
    let captured = match (probes, active) {
        (Some(p), Some(a)) => p.finish(a)?,
        _ => crate::probes::Captured::default(),
    };
    let mut flagged = false;
    if let (Some(a), Some(b)) = (cpu0, cpu1) {
        let n = stat::noise(&a, &b, own, wall, clock::ticks_per_second());
        flagged = n.flagged(opts.noise_threshold);
        noise.extend(n.to_map());
    }
    // Memory initialised lazily or hot-added during the sample: the pages
    // it faulted may have been fresh ones (doctor's lazy-memory check).
    let grew = mem1.nodes_kib.saturating_sub(mem0.nodes_kib);
    if grew > 0 {
        noise.insert("memory_grew_kib".to_string(), grew as f64);
        flagged = true;
    }
    let sample = Sample {
        seq,
        warmup,
        taken_at: crate::timefmt::now(),
        data,
        vmstat: vmstat::delta(&before, &after),
        noise,
        flagged,
    };
    Ok((sample, captured))
}
