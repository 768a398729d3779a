//! Benchmark (not a test): what vmscale's per-sample monitoring costs on a
//! 1024-CPU, 32-node machine, read from the generated fixture
//! (tests/fixtures/gen-fake-big.sh): /proc/stat (1024 CPU lines),
//! /proc/vmstat, meminfo of 32 nodes, /proc/zoneinfo (a pageset per CPU in
//! every populated zone) and numa_maps of a 1 TiB region; the machine
//! snapshot taken once per run beside them. The readers are the ones a run
//! uses; rounds interleave them, and each prints its median of the rounds.
//! A sample reads stat, vmstat and memory size before and after (runner/
//! sample.rs); colour adds zoneinfo twice, numa one numa_maps per interval.
//!
//!   cargo run --release --example bench_monitor_scale [ROOT] [ROUNDS]
//!
//! Without ROOT it generates the 1024-CPU tree in a temporary directory;
//! ROOT "/" measures this machine.

use std::path::{Path, PathBuf};
use std::time::Instant;
use vmscale::machine::Snapshot;
use vmscale::monitor::{memory_size, numa_maps, stat, vmstat, zoneinfo};

fn generate() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vmscale-bench-1024-{}", std::process::id()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gen-fake-big.sh");
    let ok = std::process::Command::new("sh")
        .arg(script)
        .arg(&dir)
        .args(["4", "8", "16", "2", "8", "32"])
        .status()
        .expect("run gen-fake-big.sh")
        .success();
    assert!(ok, "gen-fake-big.sh failed");
    dir
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (root, generated) = match args.next() {
        Some(r) => (PathBuf::from(r), false),
        None => (generate(), true),
    };
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(30);
    let snap = Snapshot::read(&root);
    println!(
        "machine at {}: {} CPUs, {} nodes; {} rounds, median ms",
        root.display(),
        snap.cpus.len(),
        snap.nodes.len(),
        rounds
    );
    let names = [
        "stat",
        "vmstat",
        "memory size",
        "zoneinfo",
        "numa_maps",
        "snapshot",
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let pid = if root == Path::new("/") {
        std::process::id() as i32
    } else {
        4242
    };
    for _ in 0..rounds {
        let mut time = |i: usize, f: &dyn Fn() -> bool| {
            let t0 = Instant::now();
            let ok = f();
            times[i].push(t0.elapsed().as_secs_f64() * 1e3);
            assert!(ok, "{} read nothing", names[i]);
        };
        time(0, &|| stat::read(&root).is_some());
        time(1, &|| !vmstat::read(&root).is_empty());
        time(2, &|| memory_size::read(&root).total_kib.is_some());
        time(3, &|| zoneinfo::read(&root).is_some_and(|z| !z.is_empty()));
        time(4, &|| {
            numa_maps::read_pages(&root, pid, 0x7e00_0000_0000).is_some()
        });
        time(5, &|| !Snapshot::read(&root).cpus.is_empty());
    }
    let med: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
    for (n, m) in names.iter().zip(&med) {
        println!("  {n:<12} {m:>9.3} ms");
    }
    let per_sample = 2.0 * (med[0] + med[1] + med[2]);
    println!(
        "per sample (stat, vmstat, memory size before and after): {per_sample:.3} ms = {:.3} % of a 1 s sample",
        per_sample / 10.0
    );
    let colour = per_sample + 2.0 * med[3];
    println!(
        "colour's sample (+ zoneinfo twice): {colour:.3} ms = {:.3} % of 1 s",
        colour / 10.0
    );
    if generated {
        let _ = std::fs::remove_dir_all(&root);
    }
}
