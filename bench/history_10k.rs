//! Benchmark (not a test) of `vmscale history` at 10,000 runs of 100
//! samples each, in two parts.
//!
//! Analysis (the default): a seeded series of 10,000 runs (100 log-normal
//! samples each, 3 % spread, steps of +8 %, -5 % and +12 % at runs 2500,
//! 5000 and 7500) through `history::analyse` (run medians and intervals,
//! E-divisive with its permutation tests, the confirmation of each step),
//! timed five times (median), and where the steps were found.
//!
//! Stored runs (`--store`): the same series written to a scratch SQLite
//! store, then `vmscale history --json` timed three times end to end
//! (median, with the command's peak resident set).
//!
//!   cargo build --release && cargo run --release --example bench_history
//!
//! Options: `--runs N` (default 10000), `--samples N` per run (default
//! 100), `--drift` (a slow 30 % rise instead of the steps), `--store`, `--binary PATH` (another vmscale, with --store),
//! `--keep` to leave the scratch store in place.
//!
//! `--validate FILE` (for bench/history-otava.sh): FILE holds
//! `{"series": [{"runs": [[samples of run 1], ...]}, ...]}`; prints
//! `{"change_points": [[indices of series 1], ...], "seconds": S}`, each
//! index that of the first run after a step, as Otava and MongoDB's
//! e_divisive give them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use vmscale::history::{Options, Point, RunRef, analyse};
use vmscale::model::{Better, Case, Figure, Sample, SampleData, Status};
use vmscale::stats::rng::SplitMix64;
use vmscale::store::{NewRun, Store};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The seeded series: the samples of each run. `drift`: instead of three
/// steps, a slow rise of 30 % over the whole series (the worst case: every
/// segment splits again until segments are short).
fn series(runs: usize, samples: usize, drift: bool) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64::new(11);
    let steps = [
        (runs / 4, 1.08f64.ln()),
        (runs / 2, 0.95f64.ln()),
        (3 * runs / 4, 1.12f64.ln()),
    ];
    (0..runs)
        .map(|i| {
            let level: f64 = if drift {
                1.3f64.ln() * i as f64 / runs as f64
            } else {
                steps.iter().filter(|s| i >= s.0).map(|s| s.1).sum()
            };
            (0..samples)
                .map(|_| 1000.0 * (level + 0.03 * rng.normal()).exp())
                .collect()
        })
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(file) = arg(&args, "--validate") {
        validate(Path::new(&file));
        return;
    }
    let runs: usize = arg(&args, "--runs")
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let samples: usize = arg(&args, "--samples")
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let values = series(runs, samples, args.iter().any(|a| a == "--drift"));
    if args.iter().any(|a| a == "--store") {
        stored(&args, &values);
    } else {
        analysis(&values);
    }
}

fn analysis(values: &[Vec<f64>]) {
    let points: Vec<Point> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Point {
            run: RunRef {
                id: i as i64 + 1,
                ..RunRef::default()
            },
            started_at: String::new(),
            values: v.clone(),
        })
        .collect();
    let figure = Figure::new("rate", "1/s", Better::Higher, true);
    let opts = Options::default();
    println!(
        "history analysis: {} runs x {} samples, load {} before",
        points.len(),
        values[0].len(),
        load()
    );
    let mut times = Vec::new();
    let mut found = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let a = analyse(&points, &figure, &opts);
        times.push(t.elapsed().as_secs_f64());
        found = a
            .change_points
            .iter()
            .map(|c| {
                format!(
                    "{} ({:+.1}%, p {:.3})",
                    c.index,
                    (c.change - 1.0) * 100.0,
                    c.p
                )
            })
            .collect();
    }
    let all = times.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>();
    println!("times s: {}", all.join(" "));
    println!("median of 5: {:.3} s (budget 2 s)", median(&mut times));
    if found.len() > 12 {
        println!("{} steps found", found.len());
    } else {
        println!("steps found at: {}", found.join(", "));
    }
    println!("load after: {}", load());
}

fn stored(args: &[String], values: &[Vec<f64>]) {
    let dir = std::env::temp_dir().join(format!("vmscale-bench-history-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let db = dir.join("history.db");
    let t = Instant::now();
    write_store(&db, values);
    println!(
        "store of {} runs x {} samples written in {:.1} s",
        values.len(),
        values[0].len(),
        t.elapsed().as_secs_f64()
    );
    let vmscale = arg(args, "--binary").map(PathBuf::from).unwrap_or_else(|| {
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
    println!("vmscale history --json, load {} before", load());
    let mut times = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..3 {
        let (secs, kib, steps) = time_history(&vmscale, &db);
        println!(
            "  {secs:.3} s, peak {:.1} MiB, {steps} steps",
            kib as f64 / 1024.0
        );
        times.push(secs);
        rss.push(kib as f64);
    }
    println!(
        "median of 3: {:.3} s, peak {:.1} MiB; load after {}",
        median(&mut times),
        median(&mut rss) / 1024.0,
        load()
    );
    if !args.iter().any(|a| a == "--keep") {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("kept {}", db.display());
    }
}

fn write_store(db: &Path, values: &[Vec<f64>]) {
    let mut store = Store::open(db).expect("open store");
    let case = Case::new(1, "bench");
    let figures = [Figure::new("rate", "1/s", Better::Higher, true)];
    for v in values {
        let id = store
            .create_run(&NewRun {
                label: Some("nightly"),
                workload: "synthetic",
                command_line: "bench_history",
                config: &serde_json::json!({"size": "1G"}),
                figures: &figures,
                machine: &serde_json::json!({"kernel_release": "6.18.0"}),
                knobs: &serde_json::json!({}),
                cases: std::slice::from_ref(&case),
                origin: "measured",
            })
            .expect("create run");
        store.batch("BEGIN").expect("begin");
        for (seq, x) in v.iter().enumerate() {
            let sample = Sample {
                seq: seq as i64,
                warmup: false,
                taken_at: String::new(),
                data: SampleData {
                    figures: BTreeMap::from([("rate".to_string(), *x)]),
                    tasks: Vec::new(),
                },
                vmstat: BTreeMap::new(),
                noise: BTreeMap::new(),
                flagged: false,
            };
            store.add_sample(id, &case, &sample).expect("add sample");
        }
        store
            .finish_run(id, Status::Complete, None)
            .expect("finish");
        store.batch("COMMIT").expect("commit");
    }
}

/// Wall seconds, peak RSS (KiB, from the child's rusage) and steps found.
fn time_history(vmscale: &Path, db: &Path) -> (f64, i64, usize) {
    let t = Instant::now();
    let out = std::process::Command::new(vmscale)
        .args(["history", "--json", "--workload", "synthetic"])
        .env("VMSCALE_DB", db)
        .output()
        .expect("run vmscale");
    let secs = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "vmscale history failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let steps = v["change_points"].as_array().map_or(0, |a| a.len());
    let kib = vmscale::exec::clock::children_peak_rss_kib() as i64;
    (secs, kib, steps)
}

fn validate(file: &Path) {
    let text = std::fs::read_to_string(file).expect("read the series file");
    let v: serde_json::Value = serde_json::from_str(&text).expect("series JSON");
    let figure = Figure::new("rate", "1/s", Better::Higher, true);
    let t = Instant::now();
    let found: Vec<Vec<usize>> = v["series"]
        .as_array()
        .expect("series array")
        .iter()
        .map(|s| {
            let points: Vec<Point> = s["runs"]
                .as_array()
                .expect("runs array")
                .iter()
                .enumerate()
                .map(|(i, r)| Point {
                    run: RunRef {
                        id: i as i64 + 1,
                        ..RunRef::default()
                    },
                    started_at: String::new(),
                    values: r
                        .as_array()
                        .expect("samples array")
                        .iter()
                        .filter_map(|x| x.as_f64())
                        .collect(),
                })
                .collect();
            analyse(&points, &figure, &Options::default())
                .change_points
                .iter()
                .map(|c| c.index)
                .collect()
        })
        .collect();
    let out = serde_json::json!({"change_points": found, "seconds": t.elapsed().as_secs_f64()});
    println!("{out}");
}
