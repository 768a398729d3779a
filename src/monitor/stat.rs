//! Noise accounting from /proc/stat: how much CPU time others (other
//! processes, interrupts, the hypervisor's steal) used while a sample ran,
//! set against the run's own rusage, and a bounded wait for a quiet machine.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The aggregate `cpu` line of /proc/stat, in ticks, and the CPU count.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    /// user + nice + system + irq + softirq (guest time is inside user).
    pub busy: u64,
    pub idle: u64,
    pub iowait: u64,
    pub steal: u64,
    /// Number of `cpuN` lines: the CPUs the kernel accounts.
    pub cpus: usize,
}

/// Parses /proc/stat text; None when the `cpu` line is missing or short.
pub fn parse(text: &str) -> Option<CpuTimes> {
    let mut out = None;
    let mut cpus = 0;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("cpu") => {
                let v: Vec<u64> = it.map_while(|f| f.parse().ok()).collect();
                if v.len() < 4 {
                    return None;
                }
                let at = |i: usize| v.get(i).copied().unwrap_or(0);
                out = Some(CpuTimes {
                    busy: at(0) + at(1) + at(2) + at(5) + at(6),
                    idle: at(3),
                    iowait: at(4),
                    steal: at(7),
                    cpus: 0,
                });
            }
            Some(name) if name.starts_with("cpu") => cpus += 1,
            _ => {}
        }
    }
    out.map(|t| CpuTimes { cpus, ..t })
}

/// Reads `<root>/proc/stat`.
pub fn read(root: &Path) -> Option<CpuTimes> {
    parse(&std::fs::read_to_string(root.join("proc/stat")).ok()?)
}

/// What others used during one sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// Busy CPU time of the whole machine less the run's own, in seconds.
    pub other_cpu_s: f64,
    pub steal_s: f64,
    /// Wall time times CPUs: what the machine could have given.
    pub capacity_s: f64,
    /// /proc/stat counts in ticks: the error of a difference of two readings
    /// on every CPU, in seconds, subtracted before flagging.
    pub resolution_s: f64,
}

impl Noise {
    /// (other + steal - resolution) / capacity, never below zero.
    pub fn share(&self) -> f64 {
        if self.capacity_s <= 0.0 {
            return 0.0;
        }
        ((self.other_cpu_s + self.steal_s - self.resolution_s) / self.capacity_s).max(0.0)
    }

    pub fn flagged(&self, threshold: f64) -> bool {
        self.share() > threshold
    }

    /// The figures stored with the sample.
    pub fn to_map(&self) -> BTreeMap<String, f64> {
        BTreeMap::from([
            ("other_cpu_s".to_string(), self.other_cpu_s),
            ("steal_s".to_string(), self.steal_s),
            ("capacity_s".to_string(), self.capacity_s),
            ("resolution_s".to_string(), self.resolution_s),
            ("other_share".to_string(), self.share()),
        ])
    }
}

/// Noise over a sample from /proc/stat before and after, the run's own CPU
/// time (self + children rusage delta) and the sample's wall time.
pub fn noise(before: &CpuTimes, after: &CpuTimes, own_cpu_s: f64, wall_s: f64, hz: u64) -> Noise {
    let hz = hz.max(1) as f64;
    let busy = after.busy.saturating_sub(before.busy) as f64 / hz;
    let steal = after.steal.saturating_sub(before.steal) as f64 / hz;
    let cpus = after.cpus.max(1) as f64;
    Noise {
        other_cpu_s: (busy - own_cpu_s).max(0.0),
        steal_s: steal,
        capacity_s: wall_s * cpus,
        resolution_s: 2.0 * cpus / hz,
    }
}

/// Waits until the machine is quiet: a `probe`-long window in which the busy
/// and steal share of all CPUs stays at or under `threshold` (vmscale itself
/// is idle meanwhile). Gives up after `limit`; returns the time waited and
/// whether it became quiet.
pub fn wait_quiet(
    root: &Path,
    threshold: f64,
    probe: Duration,
    limit: Duration,
) -> (Duration, bool) {
    let start = Instant::now();
    let hz = crate::exec::clock::ticks_per_second() as f64;
    loop {
        let Some(a) = read(root) else {
            return (start.elapsed(), false);
        };
        let t0 = Instant::now();
        std::thread::sleep(probe);
        let Some(b) = read(root) else {
            return (start.elapsed(), false);
        };
        let used = (b.busy + b.steal).saturating_sub(a.busy + a.steal) as f64 / hz;
        let cap = t0.elapsed().as_secs_f64() * b.cpus.max(1) as f64;
        let resolution = 2.0 * b.cpus.max(1) as f64 / hz;
        if ((used - resolution) / cap).max(0.0) <= threshold {
            return (start.elapsed(), true);
        }
        if start.elapsed() >= limit {
            return (start.elapsed(), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "cpu  27333 0 6616 87572 646 0 113 311 0 0
cpu0 11940 0 3110 45837 212 0 37 151 0 0
cpu1 15392 0 3506 41734 434 0 76 159 0 0
intr 123 4 5
ctxt 999
";
    // One second later on 2 CPUs (200 ticks): 150 busy ticks (120 user,
    // 25 system, 5 softirq), 20 steal, 30 idle.
    const AFTER: &str = "cpu  27453 0 6641 87602 646 0 118 331 0 0
cpu0 12000 0 3120 45850 212 0 40 161 0 0
cpu1 15453 0 3521 41752 434 0 78 170 0 0
intr 456 4 5
";

    #[test]
    fn parses_cpu_line_and_counts_cpus() {
        let t = parse(BEFORE).unwrap();
        assert_eq!(t.busy, 27333 + 6616 + 113);
        assert_eq!(t.idle, 87572);
        assert_eq!(t.iowait, 646);
        assert_eq!(t.steal, 311);
        assert_eq!(t.cpus, 2);
    }

    #[test]
    fn old_kernels_without_steal_parse() {
        let t = parse("cpu 10 1 5 100\ncpu0 10 1 5 100\n").unwrap();
        assert_eq!((t.busy, t.steal, t.cpus), (16, 0, 1));
        assert_eq!(parse("cpu 1 2\n"), None);
        assert_eq!(parse("intr 5\n"), None);
    }

    #[test]
    fn noise_is_busy_less_own_plus_steal() {
        let (a, b) = (parse(BEFORE).unwrap(), parse(AFTER).unwrap());
        // The run itself used 1.0 s of the 1.5 s busy.
        let n = noise(&a, &b, 1.0, 1.0, 100);
        assert!((n.other_cpu_s - 0.5).abs() < 1e-9);
        assert!((n.steal_s - 0.2).abs() < 1e-9);
        assert!((n.capacity_s - 2.0).abs() < 1e-9);
        assert!((n.resolution_s - 0.04).abs() < 1e-9);
        assert!((n.share() - (0.7 - 0.04) / 2.0).abs() < 1e-9);
        assert!(n.flagged(0.05));
        assert!(!n.flagged(0.5));
        let m = n.to_map();
        assert_eq!(m.len(), 5);
        assert!((m["other_share"] - n.share()).abs() < 1e-12);
    }

    #[test]
    fn own_time_above_busy_is_not_negative_noise() {
        let (a, b) = (parse(BEFORE).unwrap(), parse(AFTER).unwrap());
        let n = noise(&a, &b, 3.0, 1.0, 100);
        assert_eq!(n.other_cpu_s, 0.0);
        // Steal alone, less the tick resolution: (0.2 - 0.04) / 2.
        assert!((n.share() - 0.08).abs() < 1e-9);
    }

    #[test]
    fn quiet_wait_on_frozen_and_missing_fixtures() {
        // A frozen /proc/stat reads as perfectly idle: quiet at once.
        let dir = crate::scratch::at("");
        std::fs::create_dir_all(dir.join("proc")).unwrap();
        std::fs::write(dir.join("proc/stat"), BEFORE).unwrap();
        let (_, quiet) = wait_quiet(&dir, 0.05, Duration::from_millis(1), Duration::from_secs(1));
        assert!(quiet);
        let (_, quiet) = wait_quiet(
            &dir.join("missing"),
            0.05,
            Duration::from_millis(1),
            Duration::ZERO,
        );
        assert!(!quiet);
    }

    #[test]
    fn live_stat_parses() {
        let t = read(Path::new("/")).unwrap();
        assert!(t.cpus >= 1);
    }
}
