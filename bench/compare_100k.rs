//! Benchmark (not a test) of `vmscale compare`, in two parts.
//!
//! Growth on plain sample files (the default): two files of n log-normal
//! values (5 % spread) for n = 10^4, 10^5, 10^6, 10^7 (`--max N` stops
//! earlier), `vmscale compare a b` timed three times each (median) with
//! the command's peak resident set, and the growth of the time per tenfold
//! n (10 for linear work, 100 for quadratic).
//!
//! Stored runs (`--store`): a scratch store with two runs of 100,000
//! pft-shaped samples each (five figures, one task map, a dozen vmstat
//! counters) over four task counts, timed five times (median), with where
//! the time goes in process.
//!
//!   cargo build --release && cargo run --release --example bench_compare
//!
//! Options: `--max N` (files), `--store` (stored runs instead),
//! `--samples N` per run (stored runs, default 100000), `--binary PATH`
//! to time another vmscale (an older build, for before/after figures),
//! `--keep` to leave the scratch files in place.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use vmscale::model::{Better, Case, Figure, Sample, SampleData, Status};
use vmscale::stats::rng::SplitMix64;
use vmscale::store::{NewRun, Store};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let keep = args.iter().any(|a| a == "--keep");
    let dir = std::env::temp_dir().join(format!("vmscale-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let vmscale = arg(&args, "--binary")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let exe = std::env::current_exe().expect("current exe");
            exe.parent()
                .and_then(|p| p.parent())
                .map(|p| p.join("vmscale"))
                .expect("target dir")
        });
    assert!(
        vmscale.exists(),
        "build the binary first: cargo build --release"
    );
    if args.iter().any(|a| a == "--store") {
        stored(&args, &dir, &vmscale);
    } else {
        let max: usize = arg(&args, "--max")
            .and_then(|s| s.parse().ok())
            .unwrap_or(10_000_000);
        files(max, &dir, &vmscale);
    }
    if !keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Writes n log-normal values around `centre`, one a line.
fn write_values(path: &Path, n: usize, centre: f64, rng: &mut SplitMix64) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    for _ in 0..n {
        writeln!(w, "{:.4}", centre * (0.05 * rng.normal()).exp()).expect("write");
    }
    w.flush().expect("flush");
}

fn files(max: usize, dir: &Path, vmscale: &Path) {
    let mut rng = SplitMix64::new(3);
    println!("   samples      median s     peak MiB   growth of time (x10 samples)");
    let mut last: Option<f64> = None;
    let mut n = 10_000;
    while n <= max {
        let (a, b) = (dir.join(format!("a{n}.txt")), dir.join(format!("b{n}.txt")));
        write_values(&a, n, 100.0, &mut rng);
        write_values(&b, n, 101.0, &mut rng);
        let args: Vec<&std::ffi::OsStr> = vec![
            "compare".as_ref(),
            a.as_os_str(),
            b.as_os_str(),
            "--better".as_ref(),
            "higher".as_ref(),
        ];
        let times = timed(vmscale, &args, 3);
        // Sizes only grow, so the largest child so far is this size's.
        let peak = vmscale::exec::clock::children_peak_rss_kib() as f64 / 1024.0;
        println!(
            "{:>10}  {:>12.3}  {:>11.0}   {}",
            format!("2x{n}"),
            times[1],
            peak,
            last.map_or("-".into(), |l| format!("{:.1}", times[1] / l))
        );
        last = Some(times[1]);
        let _ = std::fs::remove_file(&a);
        let _ = std::fs::remove_file(&b);
        n *= 10;
    }
}

fn stored(args: &[String], dir: &Path, vmscale: &Path) {
    let samples: usize = arg(args, "--samples")
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let db = dir.join("bench.db");
    let t = Instant::now();
    fill(&db, samples);
    eprintln!(
        "filled {} with 2 x {samples} samples in {:.1} s",
        db.display(),
        t.elapsed().as_secs_f64()
    );

    // Where the time goes, in process: load, statistics, text.
    let t = Instant::now();
    let store = Store::open(&db).expect("open");
    let runs = [
        store.load_figures(1).expect("load"),
        store.load_figures(2).expect("load"),
    ];
    let t_load = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let sides: Vec<_> = runs.iter().map(vmscale::stats::side::Side::run).collect();
    let opts = vmscale::stats::comparison::Options {
        alpha: 0.05,
        seed: 1,
        figures: Vec::new(),
        ratio_of: vmscale::stats::comparison::RatioOf::B,
    };
    let c = vmscale::stats::comparison::compare(&sides, "runs", &opts);
    let t_stats = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let report = vmscale::report::compare_layout::report(&c);
    let text = vmscale::report::export::exporter(vmscale::report::export::Format::Text)
        .export(&report)
        .expect("export");
    eprintln!(
        "in process: load {t_load:.3} s, statistics {t_stats:.3} s ({} bootstrap rounds), \
         layout {:.3} s ({} lines)",
        c.bootstrap_rounds,
        t.elapsed().as_secs_f64(),
        text.lines().count()
    );

    let db = db.to_str().unwrap_or_default();
    let times = timed(vmscale, &["--db", db, "compare", "1", "2"], 5);
    println!(
        "compare of 2 runs x {samples} samples: median {:.3} s (min {:.3}, max {:.3}, 5 runs)",
        times[2], times[0], times[4]
    );
}

/// Wall times of `runs` runs of `vmscale ARGS`, sorted; each must succeed.
fn timed<S: AsRef<std::ffi::OsStr>>(vmscale: &Path, args: &[S], runs: usize) -> Vec<f64> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let out = std::process::Command::new(vmscale)
            .args(args)
            .output()
            .expect("run vmscale");
        times.push(t.elapsed().as_secs_f64());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times.sort_by(f64::total_cmp);
    times
}

fn fill(db: &std::path::Path, samples: usize) {
    let mut st = Store::open(db).expect("open store");
    let figures = [
        Figure::new("fault/wsec", "faults/s", Better::Higher, true),
        Figure::new("flt/cpu/s", "faults/s", Better::Higher, true),
        Figure::new("wall", "s", Better::Lower, false),
        Figure::new("user", "s", Better::Lower, false),
        Figure::new("system", "s", Better::Lower, false),
    ];
    let cases: Vec<Case> = [1, 2, 4, 8]
        .iter()
        .map(|&t| Case::new(t, "fault"))
        .collect();
    let mut rng = SplitMix64::new(5);
    for (r, shift) in [(0, 1.0), (1, 1.02)] {
        let id = st
            .create_run(&NewRun {
                label: Some(if r == 0 { "base" } else { "new" }),
                workload: "pft",
                command_line: "bench",
                config: &serde_json::json!({}),
                figures: &figures,
                machine: &serde_json::json!({ "kernel_release": "bench" }),
                knobs: &serde_json::json!({}),
                cases: &cases,
                origin: "measured",
            })
            .expect("create run");
        st.batch("BEGIN").expect("begin");
        for i in 0..samples {
            let c = &cases[i % cases.len()];
            let mut noise = || 1.0 + 0.01 * rng.normal();
            let wall = 0.05 * noise() / shift;
            let figs = BTreeMap::from([
                ("fault/wsec".to_string(), 4096.0 / wall),
                ("flt/cpu/s".to_string(), 4096.0 / (0.04 * noise())),
                ("wall".to_string(), wall),
                ("user".to_string(), 0.001 * noise()),
                ("system".to_string(), 0.04 * noise()),
            ]);
            let vm: BTreeMap<String, i64> = [
                "pgfault",
                "pgmajfault",
                "numa_hit",
                "numa_local",
                "pgalloc_normal",
                "pgfree",
                "thp_fault_alloc",
                "pgmigrate_success",
                "numa_hint_faults",
                "nr_free_pages",
            ]
            .iter()
            .enumerate()
            .map(|(k, n)| (n.to_string(), 4096 + k as i64 + (rng.below(64) as i64)))
            .collect();
            let s = Sample {
                seq: (i / cases.len()) as i64,
                warmup: false,
                taken_at: "2025-01-01T00:00:00Z".into(),
                data: SampleData {
                    figures: figs.clone(),
                    tasks: vec![figs],
                },
                vmstat: vm,
                noise: BTreeMap::new(),
                flagged: false,
            };
            st.add_sample(id, c, &s).expect("add sample");
        }
        st.batch("COMMIT").expect("commit");
        st.finish_run(id, Status::Complete, None).expect("finish");
    }
}
