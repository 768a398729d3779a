//! How busy the host was while a guest booted and ran: the share of the
//! host's CPU time that processes other than vmscale and its QEMU used
//! meanwhile (/proc/stat's busy time less their rusage). A TCG guest's
//! clock is the host's, so its figures follow the CPU the host leaves it;
//! a round whose boots saw other load is not like the others, and
//! `reproduce` says so beside its verdict.

use std::path::Path;

use crate::exec::clock;
use crate::monitor::stat::{self, CpuTimes};

/// A sample's noise key: the host's CPU share others used during the
/// boot that took it.
pub const HOST_OTHER_SHARE: &str = "host_other_share";

/// Above this share of the host's CPUs used by others during a boot, its
/// figures are called taken on a busy host.
pub const BUSY: f64 = 0.10;

/// The host's counters at a boot's start.
pub struct Mark {
    cpu: Option<CpuTimes>,
    own_s: f64,
}

/// Marks the start of a boot.
pub fn mark() -> Mark {
    Mark {
        cpu: stat::read(Path::new("/")),
        own_s: clock::own_usage().0,
    }
}

impl Mark {
    /// The share others used since the mark, over `wall_s` seconds; None
    /// when /proc/stat could not be read.
    pub fn others_share(&self, wall_s: f64) -> Option<f64> {
        let before = self.cpu.as_ref()?;
        let after = stat::read(Path::new("/"))?;
        let own = clock::own_usage().0 - self.own_s;
        let n = stat::noise(before, &after, own, wall_s, clock::ticks_per_second());
        Some(n.share())
    }
}

/// How many of the boots behind some runs saw a busy host.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Busy {
    /// Boots whose share was read.
    pub boots: usize,
    /// Of those, boots above [`BUSY`].
    pub busy: usize,
    /// The largest share seen.
    pub max_other_share: f64,
}

impl Busy {
    /// The tally of some boots' shares; None for none.
    pub fn of(shares: impl IntoIterator<Item = f64>) -> Option<Busy> {
        let shares: Vec<f64> = shares.into_iter().collect();
        (!shares.is_empty()).then(|| Busy {
            boots: shares.len(),
            busy: shares.iter().filter(|&&s| s > BUSY).count(),
            max_other_share: shares.iter().copied().fold(0.0, f64::max),
        })
    }

    /// Said under a verdict when some boots saw the host busy.
    pub fn line(&self) -> Option<String> {
        (self.busy > 0).then(|| {
            crate::text::fill(
                &format!(
                    "busy during {} of {} boots: other processes used up to {:.0}% of \
                     its CPUs (busy means over {:.0}%). A guest's figures follow the CPU \
                     the host leaves it, so those rounds are not like the others and the \
                     interval can claim a change that is not there: rerun with the host \
                     quiet, or under --accel icount (its clock counts instructions).",
                    self.busy,
                    self.boots,
                    self.max_other_share * 100.0,
                    BUSY * 100.0
                ),
                80,
                "Host: ",
                "  ",
            )
        })
    }
}

/// The boots behind `runs` (a boot is a run's round) and how many of them
/// saw the host busy; None when no boot's share was read.
pub fn busy_boots<'a>(runs: impl IntoIterator<Item = &'a crate::model::Run>) -> Option<Busy> {
    let mut seen = std::collections::BTreeMap::new();
    for (i, run) in runs.into_iter().enumerate() {
        for s in run.cases.iter().flat_map(|c| c.samples.iter()) {
            if let (Some(&round), Some(&share)) = (
                s.noise.get(crate::model::GUEST_ROUND),
                s.noise.get(HOST_OTHER_SHARE),
            ) {
                seen.insert((i, round as i64), share);
            }
        }
    }
    Busy::of(seen.into_values())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Better;
    use crate::model::build::{case, run, sample};

    #[test]
    fn each_boot_counts_once_and_busy_ones_are_named() {
        let s = |round: f64, share: f64| {
            sample()
                .figure("x", 1.0)
                .noise(crate::model::GUEST_ROUND, round)
                .noise(HOST_OTHER_SHARE, share)
        };
        let side = |shares: [f64; 2]| {
            run("pft")
                .figure("x", "1/s", Better::Higher, true)
                .case(
                    case(1, "fault")
                        .sample(s(1.0, shares[0]))
                        .sample(s(1.0, shares[0]))
                        .sample(s(2.0, shares[1])),
                )
                .build()
        };
        let (a, b) = (side([0.02, 0.31]), side([0.05, 0.04]));
        let busy = busy_boots([&a, &b]).unwrap();
        assert_eq!(
            busy,
            Busy {
                boots: 4,
                busy: 1,
                max_other_share: 0.31
            }
        );
        let host = run("pft")
            .figure("x", "1/s", Better::Higher, true)
            .case(case(1, "fault").sample(sample().figure("x", 1.0)))
            .build();
        assert_eq!(busy_boots([&host]), None);
        let line = busy.line().unwrap();
        assert!(line.starts_with("Host: busy during 1 of 4 boots"), "{line}");
        assert!(line.contains("up to 31%"), "{line}");
        let quiet = busy_boots([&b]).unwrap();
        assert_eq!(quiet.line(), None);
    }

    #[test]
    fn others_burning_a_cpu_show_and_vmscale_s_own_work_does_not() {
        // Our own busy loop is subtracted: it is vmscale's (as QEMU's is).
        let m = mark();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 300 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let own = m.others_share(t.elapsed().as_secs_f64()).unwrap();
        // Another process's busy loop is not.
        let m = mark();
        let t = std::time::Instant::now();
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "end=$(($(date +%s) + 2)); while [ $(date +%s) -lt $end ]; do :; done",
            ])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(600));
        let other = m.others_share(t.elapsed().as_secs_f64()).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(other > own, "others {other}, own {own}");
    }
}
