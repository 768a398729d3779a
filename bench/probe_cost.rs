//! What each probe around pft's timed section costs it, measured in one
//! process with the probe on and off in interleaved pairs (A B, then B A),
//! so drift and other load hit both sides alike: per pair the ratio of
//! fault/wsec with the probe to without; the paired ratio (geometric mean
//! of the pairs' ratios) with its 95 % interval, for 1 and 2 tasks.
//!
//!     cargo run --release --example bench_probe_cost [PAIRS] [SIZE_MIB] [PROBES]
//!
//! PROBES is a comma list (default `perf,around,profile`):
//! - `perf`: the perf `page-faults` counter open on every task through its
//!   timed loop (`run pft --perf-faults`; off by default);
//! - `around`: what the runner reads around every sample, outside the
//!   tasks' timed sections: /proc/vmstat, /proc/stat (the noise sampler),
//!   the nodes' memory size (the lazy-memory monitor), its own and its
//!   children's rusage (own faults and CPU time), each twice;
//! - `counters`: what `monitor::counters` reads around every sample beside
//!   /proc/vmstat: the per-size THP counters (every file of every
//!   hugepages-<N>kB/stats/) and zswap's debugfs counters, each twice;
//! - `profile`: `--profile` (its sampling rings on every CPU; opt-in);
//! - `meminfo`: `--meminfo` (a thread reading /proc/meminfo once a second
//!   beside the tasks, the first reading half a second in; opt-in).
//!
//! It also times one read of the per-size THP and of the zswap counters
//! (median of 200 rounds of 10 reads), and the reads a task makes at the edges of its timed loop
//! (CLOCK_MONOTONIC, getrusage(RUSAGE_THREAD)) a million times each, and
//! prints them as a share of the median sample's wall time. The progress
//! bar is drawn between samples by the runner's thread and never ticks
//! during one, so it has nothing to measure in the timed section.
//!
//! FIGURE=flt/cpu/s compares faults per CPU second instead, which time the
//! tasks spend off their CPUs (other load) does not dilute.
//!
//! Needs root (or perf_event_paranoid <= 1) for `profile`.

use std::path::Path;
use std::time::Instant;

use vmscale::exec::clock;
use vmscale::model::Case;
use vmscale::monitor::{meminfo, memory_size, mthp, stat, vmstat, zswap};
use vmscale::probes::{Probes, Request, preflight};
use vmscale::stats::paired;
use vmscale::stats::summary::median;
use vmscale::workload::Measure;
use vmscale::workload::pft::{Config, HEADLINE, Pft};

fn pft(tasks: usize, mib: u64, perf: bool) -> Pft {
    let cfg: Config = serde_json::from_value(serde_json::json!({
        "access": "write", "backing": "anon", "cline": 1, "huge_size": 0,
        "line_size": 64, "mode": "thread", "page_size": 4096, "pages": "base",
        "path": null, "pin": "compact", "populate": false, "shared": false,
        "size_per_task": null, "size_total": mib << 20, "tasks": [tasks],
        "thp": "never", "perf_faults": perf
    }))
    .expect("a pft configuration");
    Pft::new(cfg, vmscale::machine::live()).expect("pft")
}

/// The runner's reads around one sample (each taken before and after).
fn around() {
    let root = Path::new("/");
    std::hint::black_box((
        memory_size::read(root),
        vmstat::read_live(),
        stat::read(root),
        clock::usage(clock::Who::Process),
        clock::usage(clock::Who::Children),
    ));
}

/// The per-size THP and zswap counters, as the runner reads them beside
/// /proc/vmstat before and after every sample.
fn counters() {
    let root = Path::new("/");
    std::hint::black_box((mthp::read(root), zswap::read(root)));
}

/// Microseconds per call of `f`: the median of 200 rounds of 10 calls.
fn median_us(f: impl Fn()) -> f64 {
    let rounds: Vec<f64> = (0..200)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..10 {
                f();
            }
            t.elapsed().as_secs_f64() * 1e5
        })
        .collect();
    median(&rounds)
}

/// Nanoseconds per call of `f`, over a million calls.
fn per_call(f: impl Fn()) -> f64 {
    let n = 1_000_000;
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let (pairs, mib) = (arg(1, 20) as usize, arg(2, 1024));
    let which = std::env::args()
        .nth(3)
        .unwrap_or_else(|| "perf,around,profile".into());
    let figure = std::env::var("FIGURE").unwrap_or_else(|_| HEADLINE.into());
    let mut profile: Option<Probes> = None;
    if which.split(',').any(|p| p == "profile") {
        match preflight(&Request {
            hz: Some(499),
            locks: false,
        }) {
            Ok(p) => profile = p,
            Err(e) => eprintln!("bench_probe_cost: profile left out: {e}"),
        }
    }
    let load = || {
        let l = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    };
    println!(
        "pft {figure} with / without each probe, {pairs} interleaved pairs, {mib} MiB, \
         load {}",
        load()
    );
    let mut walls = Vec::new();
    for tasks in [1usize, 2] {
        let case = Case::new(tasks, "fault");
        let (plain, counted) = (pft(tasks, mib, false), pft(tasks, mib, true));
        for probe in which.split(',') {
            if probe == "profile" && profile.is_none() {
                continue;
            }
            let mut sample = |on: bool| -> f64 {
                let w = if on && probe == "perf" {
                    &counted
                } else {
                    &plain
                };
                if on && probe == "around" {
                    around();
                }
                if on && probe == "counters" {
                    counters();
                }
                let levels = (on && probe == "meminfo").then(|| {
                    let fields = ["AnonPages", "Active(anon)"].map(|f| meminfo::field(f).unwrap());
                    meminfo::start(Path::new("/"), &fields, meminfo::PERIOD).expect("meminfo")
                });
                let active = match (&mut profile, on && probe == "profile") {
                    (Some(p), true) => Some(p.start().expect("start the profile")),
                    _ => None,
                };
                let d = w.sample(&case).expect("a pft sample");
                if let Some(l) = levels {
                    std::hint::black_box(l.finish());
                }
                if on && probe == "around" {
                    around();
                }
                if on && probe == "counters" {
                    counters();
                }
                if let (Some(p), Some(a)) = (&mut profile, active) {
                    p.finish(a).expect("finish the profile");
                }
                walls.push(d.figures["wall"]);
                d.figures[figure.as_str()]
            };
            sample(false);
            sample(true);
            let (mut off, mut on) = (Vec::new(), Vec::new());
            for i in 0..pairs {
                // A B, then B A: neither side is always first.
                if i % 2 == 0 {
                    off.push((i as i64, sample(false)));
                    on.push((i as i64, sample(true)));
                } else {
                    on.push((i as i64, sample(true)));
                    off.push((i as i64, sample(false)));
                }
            }
            let r = paired::ratio(&off, &on).expect("two pairs or more");
            let cost = (1.0 - r.ratio) * 100.0;
            println!(
                "  {tasks} task{} {probe:<8} on/off {:.4} [{:.4}, {:.4}]  cost {cost:+.2} %",
                if tasks == 1 { " " } else { "s" },
                r.ratio,
                r.ci95.0,
                r.ci95.1,
            );
        }
    }
    let wall = median(&walls);
    let clock_ns = per_call(|| {
        std::hint::black_box(clock::monotonic_ns());
    });
    let rusage_ns = per_call(|| {
        std::hint::black_box(clock::usage(clock::Who::Thread));
    });
    println!(
        "  edges of the timed loop, per task and sample: clock read {clock_ns:.0} ns \
         ({:.5} % of the median wall {:.3} s), getrusage(RUSAGE_THREAD) {rusage_ns:.0} ns \
         (read outside the wall)",
        clock_ns / (wall * 1e9) * 100.0,
        wall
    );
    let root = Path::new("/");
    let mthp_us = median_us(|| {
        std::hint::black_box(mthp::read(root));
    });
    let zswap_us = median_us(|| {
        std::hint::black_box(zswap::read(root));
    });
    println!(
        "  one read: per-size THP counters {mthp_us:.1} us ({} values), zswap {zswap_us:.1} us \
         ({} values); both, twice a sample: {:.4} % of the median wall",
        mthp::read(root).len(),
        zswap::read(root).len(),
        2.0 * (mthp_us + zswap_us) / (wall * 1e6) * 100.0,
    );
    let meminfo_us = median_us(|| {
        std::hint::black_box(vmscale::machine::memory::read_meminfo(root));
    });
    println!(
        "  one read of /proc/meminfo (--meminfo, once a second): {meminfo_us:.1} us, \
         {:.4} % of a second",
        meminfo_us / 1e6 * 100.0,
    );
    println!("  load after {}", load());
}
