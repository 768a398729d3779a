//! What `--profile` costs pft, measured in one process with profiled and
//! plain samples interleaved (A B B A ...), so drift and other load on the
//! machine hit both alike: per pair, the ratio of fault/wsec profiled to
//! plain; the median and middle half of the ratios, and the medians by
//! pair index (does the cost grow with the samples taken before?).
//!
//!     cargo run --release --example bench_profile_cost [PAIRS] [SIZE_MIB] [HZ] [SETUP]
//!
//! SETUP is what the profiled side has, to find where a cost comes from:
//! `probes` (default: `run --profile` as built), `counter` (cpu-clock
//! counting, no sampling, inherited, per CPU), `open` (the profile's
//! sampled events opened but never enabled), `dummy` (a software dummy
//! event, inherited, per CPU: the bare cost of events on the tasks),
//! `ring` (the profile's sampled events with their ring buffers, enabled,
//! but no drain thread and nothing symbolised).
//! FIGURE=flt/cpu/s compares faults per CPU second instead, which time the
//! workers spend off their CPUs (other load) does not dilute.
//!
//! Needs root (or perf_event_paranoid <= 1) for kernel stacks.

use perf_event::events::Software;
use perf_event::{Builder, Counter};
use vmscale::model::Case;
use vmscale::probes::{Request, preflight};
use vmscale::workload::Measure;
use vmscale::workload::pft::{Config, HEADLINE, Pft};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let (pairs, mib, hz) = (arg(1, 40) as usize, arg(2, 128), arg(3, 999));
    let setup = std::env::args().nth(4).unwrap_or_else(|| "probes".into());
    // FIGURE=flt/cpu/s compares per CPU second, which time off the CPU
    // (other load) does not dilute.
    let figure = std::env::var("FIGURE").unwrap_or_else(|_| HEADLINE.into());
    let cfg: Config = serde_json::from_value(serde_json::json!({
        "access": "write", "backing": "anon", "cline": 1, "huge_size": 0,
        "line_size": 64, "mode": "thread", "page_size": 4096, "pages": "base",
        "path": null, "pin": "compact", "populate": false, "shared": false,
        "size_per_task": null, "size_total": mib << 20, "tasks": [2], "thp": "never"
    }))
    .expect("a pft configuration");
    let pft = Pft::new(cfg, vmscale::machine::live()).expect("pft");
    let case = Case::new(2, "fault");
    let req = Request {
        hz: Some(hz),
        locks: false,
    };
    let mut probes = match preflight(&req) {
        Ok(Some(p)) => p,
        Ok(None) => unreachable!("a profile was requested"),
        Err(e) => {
            eprintln!("bench_profile_cost: {e}");
            std::process::exit(2);
        }
    };
    let per_cpu = |b: &Builder| -> Vec<Counter> {
        vmscale::profile::sampler::online_cpus()
            .into_iter()
            .map(|cpu| {
                let mut b = b.clone();
                b.observe_self().one_cpu(cpu).inherit(true);
                b.build().expect("perf_event_open")
            })
            .collect()
    };
    let rate = |profiled: bool, probes: &mut vmscale::probes::Probes| -> f64 {
        let sample = || pft.sample(&case).expect("a pft sample").figures[figure.as_str()];
        if !profiled {
            return sample();
        }
        let kind = vmscale::profile::EventKind::CpuClock;
        // Each setup's events stay open until its sample is taken.
        match setup.as_str() {
            "probes" => {
                let active = probes.start().expect("start the profile");
                let r = sample();
                probes.finish(active).expect("finish the profile");
                r
            }
            "ring" => {
                let mut rings = vmscale::profile::sampler::open_per_cpu(&kind.builder(hz), 0)
                    .expect("perf_event_open");
                for (_, r) in rings.iter_mut() {
                    r.enable().expect("enable");
                }
                sample()
            }
            "open" => {
                let _events = per_cpu(&kind.builder(hz));
                sample()
            }
            "counter" | "dummy" => {
                let mut events = if setup == "counter" {
                    per_cpu(Builder::new(Software::CPU_CLOCK).include_kernel())
                } else {
                    per_cpu(&Builder::new(Software::DUMMY))
                };
                for e in events.iter_mut() {
                    e.enable().expect("enable");
                }
                sample()
            }
            other => panic!("unknown setup {other}"),
        }
    };
    // Warm up the allocator and the symbol cache.
    rate(false, &mut probes);
    rate(true, &mut probes);
    let mut ratios = Vec::with_capacity(pairs);
    for i in 0..pairs {
        // A B, then B A: neither side is always first.
        let (plain, profiled) = if i % 2 == 0 {
            let p = rate(false, &mut probes);
            (p, rate(true, &mut probes))
        } else {
            let q = rate(true, &mut probes);
            (rate(false, &mut probes), q)
        };
        ratios.push(profiled / plain);
    }
    let by_half: Vec<f64> = [&ratios[..pairs / 2], &ratios[pairs / 2..]]
        .iter()
        .map(|h| median(&mut h.to_vec()))
        .collect();
    let mut sorted = ratios.clone();
    let m = median(&mut sorted);
    println!(
        "pft --tasks 2 --size {mib}M, --profile={hz} ({setup}): {pairs} pairs, profiled/plain \
         {figure} median {m:.3} (middle half {:.3} .. {:.3}); first half of the \
         pairs {:.3}, second half {:.3}",
        quantile(&sorted, 0.25),
        quantile(&sorted, 0.75),
        by_half[0],
        by_half[1]
    );
}
