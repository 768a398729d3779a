//! How long symbolising a one-minute profile takes: two threads fault
//! anonymous memory in for 60 s (or the seconds given) under `--profile`'s
//! default sampling, then the recording is stopped and folded (kernel
//! symbols from /proc/kallsyms, user symbols from this binary) and timed.
//!
//!     cargo run --release --example bench_symbolise [SECONDS]

use std::time::{Duration, Instant};

fn fault_loop(until: Instant) {
    const SIZE: usize = 8 << 20;
    while Instant::now() < until {
        let mut v = vec![0u8; SIZE];
        for i in (0..SIZE).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
    }
}

fn main() {
    let secs: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let req = vmscale::probes::Request {
        hz: Some(vmscale::profile::DEFAULT_HZ),
        locks: false,
    };
    let mut probes = match vmscale::probes::preflight(&req) {
        Ok(Some(p)) => p,
        Ok(None) => unreachable!("a profile was requested"),
        Err(e) => {
            eprintln!("bench_symbolise: {e}");
            std::process::exit(2);
        }
    };
    let active = probes.start().expect("start the profile");
    let until = Instant::now() + Duration::from_secs(secs);
    let workers: Vec<_> = (0..2)
        .map(|_| std::thread::spawn(move || fault_loop(until)))
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let t = Instant::now();
    let captured = probes.finish(active).expect("finish the profile");
    let took = t.elapsed();
    let p = captured.profile.expect("a profile");
    println!(
        "{secs} s profile: {} samples ({} lost), {} distinct folded stacks; \
         stop + symbolise + fold took {:.3} s",
        p.samples,
        p.lost,
        p.folded.len(),
        took.as_secs_f64()
    );
}
