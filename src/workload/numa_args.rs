//! `vmscale run numa01` .. `numa02-smt`: the four patterns' registry
//! entries, their shared options and how those become a validated `Numa`.

use super::Workload;
use super::numa::{self, Numa, Pattern};
use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};
use crate::parse;

// The NUMA patterns' options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Region size (default: autonumabench's, capped to half the first node's memory)
    #[arg(long)]
    pub size: Option<String>,
    /// Passes over the region (default: autonumabench's 50, 1000 and 800,
    /// fewer where a thread would zero more per sample than numa01's does)
    #[arg(long)]
    pub loops: Option<u64>,
    /// Per-thread page locality sampling interval, e.g. 1s, 200ms
    #[arg(long, default_value = "1s")]
    pub interval: String,
    /// Locality fraction that counts as converged
    #[arg(long, default_value_t = 0.9)]
    pub threshold: f64,
}

/// `vmscale run numa01 --help`'s examples (and the other patterns').
pub const EXAMPLES: &str = "Examples:\n  vmscale run numa01 --size 1G --loops 10\n  \
vmscale run numa02 --reps 3\n  \
vmscale run numa02-smt --size 256M --loops 50 --interval 200ms --threshold 0.9";

/// `--interval` ("1s", "200ms", "0.5") in whole milliseconds, at least 1.
fn interval_ms(text: &str) -> Result<u64> {
    let d = parse::duration(text).map_err(|e| e.context("--interval"))?;
    match u64::try_from(d.as_millis()) {
        Ok(ms) if ms >= 1 => Ok(ms),
        _ => Err(Error::Input(format!(
            "--interval '{text}' is out of range: use 1ms or more, e.g. 1s or 200ms"
        ))),
    }
}

impl Options for Args {
    /// The pattern is the one of the subcommand (`env.spec`).
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let m = env.machine;
        let p = Pattern::of(env.spec)?;
        let size = self
            .size
            .as_deref()
            .map(|t| parse::size_arg("--size", t))
            .transpose()?;
        let ms = interval_ms(&self.interval)?;
        let cfg = numa::plan(p, size, self.loops, ms, self.threshold, m)?;
        env.made(cfg, |cfg| Ok(Numa::new(cfg, m)))
    }
}

/// The four patterns in the registry (`workload::REGISTRY`).
const fn spec(
    pattern: Pattern,
    about: &'static str,
    quick: fn(&crate::machine::Snapshot) -> Vec<Vec<String>>,
) -> Spec {
    Spec {
        name: pattern.name(),
        about,
        examples: EXAMPLES,
        quick,
        figures: numa::FIGURES,
        report: super::Report::Numa,
        size_flags: "a smaller --size",
        // NUMA balancing may be what is measured: --tune leaves it alone.
        measures_knobs: &["numa_balancing"],
        ..Spec::of::<Args>()
    }
}

pub const SPEC_NUMA01: Spec = spec(
    Pattern::Numa01,
    "autonumabench numa01: 2 processes zero their own regions first touched on a node",
    |_| quick(10),
);
pub const SPEC_NUMA01_THREADLOCAL: Spec = spec(
    Pattern::Numa01Threadlocal,
    "numa01 with each thread zeroing only its own slice",
    |_| quick(20),
);
pub const SPEC_NUMA02: Spec = spec(
    Pattern::Numa02,
    "autonumabench numa02: one thread per CPU, each zeroing its slice",
    |_| quick(20),
);
pub const SPEC_NUMA02_SMT: Spec = spec(Pattern::Numa02Smt, "numa02 with half the threads", |_| {
    quick(20)
});

/// `run quick`: 32 MiB, `loops` passes, locality read every 50 ms.
fn quick(loops: u64) -> Vec<Vec<String>> {
    vec![super::spec::args(&format!(
        "--size 32M --loops {loops} --interval 50ms"
    ))]
}
