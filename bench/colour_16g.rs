//! Benchmark (not a test): the colour analysis of 16 GiB of 4 KiB frames
//! (4 Mi pages) over 4 tasks, on synthetic frame lists handed out in
//! allocator-like batches, the touch excluded. Prints the median of 5.
//!
//!   cargo run --release --example bench_colour

use vmscale::stats::colour::analyse;

fn main() {
    let pages: u64 = 4 << 20;
    let tasks = 4usize;
    let mut lists: Vec<Vec<u64>> = (0..tasks)
        .map(|_| Vec::with_capacity(pages as usize / tasks))
        .collect();
    // Batches of 63 (a common pcp batch), handed out in reverse, owners
    // chosen by a xorshift so the interleave is irregular.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut pfn = 0x10_0000u64;
    while lists.iter().map(|l| l.len() as u64).sum::<u64>() < pages {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let t = (x % tasks as u64) as usize;
        lists[t].extend((pfn..pfn + 63).rev());
        pfn += 63 + (x >> 60);
    }
    let refs: Vec<&[u64]> = lists.iter().map(|l| l.as_slice()).collect();
    let mut times = Vec::new();
    for _ in 0..5 {
        let t0 = std::time::Instant::now();
        let a = analyse(&refs, 512, Some(16));
        times.push(t0.elapsed().as_secs_f64());
        assert_eq!(a.tasks.len(), tasks, "one analysis per task");
    }
    times.sort_by(f64::total_cmp);
    println!(
        "colour analysis of {} pages: median {:.3} s of 5 (min {:.3}, max {:.3})",
        refs.iter().map(|l| l.len()).sum::<usize>(),
        times[2],
        times[0],
        times[4]
    );
}
