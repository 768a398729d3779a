//! Doctor checks on CPUs and scheduling: the hypervisor, steal, frequency
//! governor and boost, busy SMT siblings, other runnable work, ASLR,
//! interrupts on the CPUs to be used, perf_event_paranoid.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::{Finding, Outcome, ev, fine, tune};
use crate::machine::{kernel, read_trimmed, topology, under};

/// Steal above this share of all CPU time (since boot or in the window).
const STEAL_SHARE: f64 = 0.001;
/// A sibling busier than this share of the window is "busy".
const SIBLING_BUSY: f64 = 0.10;
/// Device interrupts per second on one CPU to be used.
const IRQ_RATE: f64 = 100.0;

/// Per-CPU /proc/stat lines and /proc/interrupts, read twice `window` apart.
pub struct Activity {
    pub window_s: f64,
    /// CPU id -> (busy ticks, all ticks) over the window.
    pub cpu_ticks: BTreeMap<usize, (u64, u64)>,
    /// Aggregate (steal, all) ticks over the window.
    pub steal: (u64, u64),
    /// CPU id -> device interrupts over the window.
    pub irqs: BTreeMap<usize, u64>,
}

impl Activity {
    pub fn watch(root: &Path, window: Duration) -> Activity {
        let stat0 = read_text(root, "/proc/stat");
        let irq0 = read_text(root, "/proc/interrupts");
        if !window.is_zero() {
            std::thread::sleep(window);
        }
        let stat1 = read_text(root, "/proc/stat");
        let irq1 = read_text(root, "/proc/interrupts");
        let d = |a: &BTreeMap<usize, Vec<u64>>, b: &BTreeMap<usize, Vec<u64>>| {
            b.iter()
                .filter_map(|(cpu, v1)| {
                    let v0 = a.get(cpu)?;
                    Some((*cpu, ticks(v1).delta(ticks(v0))))
                })
                .collect::<BTreeMap<_, _>>()
        };
        let (p0, p1) = (per_cpu_stat(&stat0), per_cpu_stat(&stat1));
        let agg = |t: &str| {
            t.lines()
                .find(|l| l.starts_with("cpu "))
                .map(fields)
                .unwrap_or_default()
        };
        let (a0, a1) = (agg(&stat0), agg(&stat1));
        let steal = (
            at(&a1, 7).saturating_sub(at(&a0, 7)),
            a1.iter().sum::<u64>().saturating_sub(a0.iter().sum()),
        );
        let (i0, i1) = (device_irqs(&irq0), device_irqs(&irq1));
        Activity {
            window_s: window.as_secs_f64(),
            cpu_ticks: d(&p0, &p1)
                .into_iter()
                .map(|(c, t)| (c, (t.busy, t.all)))
                .collect(),
            steal,
            irqs: i1
                .iter()
                .map(|(c, n)| (*c, n.saturating_sub(*i0.get(c).unwrap_or(&0))))
                .collect(),
        }
    }
}

fn read_text(root: &Path, abs: &str) -> String {
    std::fs::read_to_string(under(root, abs)).unwrap_or_default()
}

fn fields(line: &str) -> Vec<u64> {
    line.split_whitespace()
        .skip(1)
        .map_while(|f| f.parse().ok())
        .collect()
}

fn at(v: &[u64], i: usize) -> u64 {
    v.get(i).copied().unwrap_or(0)
}

#[derive(Clone, Copy)]
struct Ticks {
    busy: u64,
    all: u64,
}

impl Ticks {
    fn delta(self, before: Ticks) -> Ticks {
        Ticks {
            busy: self.busy.saturating_sub(before.busy),
            all: self.all.saturating_sub(before.all),
        }
    }
}

/// Busy = everything but idle, iowait and steal; guest time is inside user.
fn ticks(v: &[u64]) -> Ticks {
    let all: u64 = v.iter().take(8).sum();
    Ticks {
        busy: all.saturating_sub(at(v, 3) + at(v, 4) + at(v, 7)),
        all,
    }
}

fn per_cpu_stat(text: &str) -> BTreeMap<usize, Vec<u64>> {
    text.lines()
        .filter_map(|l| {
            let name = l.split_whitespace().next()?;
            let id = name.strip_prefix("cpu")?.parse().ok()?;
            Some((id, fields(l)))
        })
        .collect()
}

/// Per-CPU totals of the numbered (device) interrupt lines of
/// /proc/interrupts; the named lines (LOC, RES, ...) are the kernel's own.
pub fn device_irqs(text: &str) -> BTreeMap<usize, u64> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return BTreeMap::new();
    };
    let cpus: Vec<usize> = header
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect();
    let mut out: BTreeMap<usize, u64> = cpus.iter().map(|&c| (c, 0)).collect();
    for l in lines {
        let Some((label, rest)) = l.split_once(':') else {
            continue;
        };
        if label.trim().parse::<u64>().is_err() {
            continue;
        }
        for (cpu, n) in cpus.iter().zip(rest.split_whitespace()) {
            if let Ok(n) = n.parse::<u64>() {
                *out.entry(*cpu).or_default() += n;
            }
        }
    }
    out
}

pub fn virtualisation(root: &Path) -> Outcome {
    let h = kernel::hypervisor(root);
    let mut evidence = Vec::new();
    if let Some(t) = read_trimmed(root, "/sys/hypervisor/type").filter(|t| !t.is_empty()) {
        evidence.push(ev("/sys/hypervisor/type", t));
    }
    if h.present.is_some() {
        let flag = if h.present == Some(true) {
            "has 'hypervisor'"
        } else {
            "no 'hypervisor'"
        };
        evidence.push(ev("/proc/cpuinfo flags", flag));
    }
    if let Some(v) = read_trimmed(root, "/sys/class/dmi/id/sys_vendor") {
        evidence.push(ev("/sys/class/dmi/id/sys_vendor", v));
    }
    // A paravirtual clock names the hypervisor where DMI is absent.
    let clocks_path = "/sys/devices/system/clocksource/clocksource0/available_clocksource";
    let clocks = read_trimmed(root, clocks_path).unwrap_or_default();
    let pv = [
        ("kvm-clock", "KVM"),
        ("hyperv_clocksource_tsc_page", "Hyper-V"),
        ("xen", "Xen"),
        ("vmware", "VMware"),
    ]
    .into_iter()
    .find(|(c, _)| clocks.split_whitespace().any(|w| w.starts_with(c)));
    if let Some((c, _)) = pv {
        evidence.push(ev(clocks_path, format!("{clocks} (has {c})")));
    }
    if h.present != Some(true) {
        return fine("virtualisation", evidence);
    }
    let name = match (h.name.as_deref(), pv) {
        (Some("present") | None, Some((_, n))) => n.to_string(),
        (Some(n), _) => n.to_string(),
        (None, None) => "hypervisor".to_string(),
    };
    Outcome::Found(Finding {
        check: "virtualisation",
        what: format!(
            "a virtual machine ({name}): the host's work (second-level page \
             faults, vCPU scheduling, its own load) is inside every figure"
        ),
        evidence,
        fix: "compare only runs from the same guest, interleave variants (--knob), \
              and confirm absolute figures on bare metal; ask the host to pin vCPUs \
              and back guest memory with huge pages"
            .into(),
        tune: Vec::new(),
    })
}

pub fn steal(root: &Path, act: &Activity) -> Outcome {
    let text = read_text(root, "/proc/stat");
    let Some(line) = text.lines().find(|l| l.starts_with("cpu ")) else {
        return fine("steal", Vec::new());
    };
    let v = fields(line);
    let all: u64 = v.iter().sum();
    let boot = if all == 0 {
        0.0
    } else {
        at(&v, 7) as f64 / all as f64
    };
    let now = if act.steal.1 == 0 {
        0.0
    } else {
        act.steal.0 as f64 / act.steal.1 as f64
    };
    let mut evidence = vec![ev(
        "/proc/stat cpu steal",
        format!(
            "{} of {all} ticks since boot ({:.3} %)",
            at(&v, 7),
            100.0 * boot
        ),
    )];
    if act.window_s > 0.0 {
        evidence.push(ev(
            "/proc/stat cpu steal",
            format!("{:.2} % in the last {:.1} s", 100.0 * now, act.window_s),
        ));
    }
    if boot.max(now) <= STEAL_SHARE {
        return fine("steal", evidence);
    }
    Outcome::Found(Finding {
        check: "steal",
        what: "the hypervisor ran something else on this guest's CPUs (steal time)".into(),
        evidence,
        fix: "run when the host is quiet; vmscale flags samples with steal \
              (--noise-threshold), --wait-quiet waits for a quiet machine"
            .into(),
        tune: Vec::new(),
    })
}

pub fn governor(root: &Path, cpus: &[usize]) -> Outcome {
    let mut evidence = Vec::new();
    let mut slow = false;
    for c in cpus {
        let p = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor");
        if let Some(g) = read_trimmed(root, &p) {
            slow |= g != "performance";
            evidence.push(ev(&p, g));
        }
    }
    if !slow {
        return fine("cpu-governor", evidence);
    }
    Outcome::Found(Finding {
        check: "cpu-governor",
        what: "CPU frequency follows load: the first part of every sample runs \
               slower than the rest"
            .into(),
        evidence,
        fix: "set the performance governor: cpupower frequency-set -g performance \
              (or write 'performance' to each scaling_governor)"
            .into(),
        tune: Vec::new(),
    })
}

pub fn boost(root: &Path) -> Outcome {
    for (path, on, knob, off) in [
        (
            "/sys/devices/system/cpu/intel_pstate/no_turbo",
            "0",
            "no_turbo",
            "1",
        ),
        (
            "/sys/devices/system/cpu/cpufreq/boost",
            "1",
            "cpu_boost",
            "0",
        ),
    ] {
        if let Some(v) = read_trimmed(root, path) {
            if v != on {
                return fine("cpu-boost", vec![ev(path, v)]);
            }
            return Outcome::Found(Finding {
                check: "cpu-boost",
                what: "turbo/boost is on: the clock depends on temperature and on \
                       how many cores are busy, so task counts are not compared \
                       at one frequency"
                    .into(),
                evidence: vec![ev(path, v)],
                fix: format!("write {off} to {path}"),
                tune: tune(knob, off),
            });
        }
    }
    fine("cpu-boost", Vec::new())
}

pub fn smt_siblings(root: &Path, cpus: &[usize], act: &Activity) -> Outcome {
    let mut evidence = Vec::new();
    let mut busy = false;
    for &c in cpus {
        let p = format!("/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list");
        let Some(sibs) = topology::read_cpulist(root, &p) else {
            continue;
        };
        for s in sibs.into_iter().filter(|s| !cpus.contains(s)) {
            let share = act
                .cpu_ticks
                .get(&s)
                .filter(|t| t.1 > 0)
                .map(|t| t.0 as f64 / t.1 as f64);
            let shown = share.map_or("?".into(), |x| format!("{:.0} % busy", 100.0 * x));
            evidence.push(ev(&p, format!("cpu{c} shares a core with cpu{s}, {shown}")));
            busy |= share.is_some_and(|x| x > SIBLING_BUSY);
        }
    }
    if !busy {
        if evidence.is_empty() && act.window_s > 0.0 && !cpus.is_empty() {
            evidence.push(ev(
                "/sys/devices/system/cpu/cpuN/topology",
                "no sibling outside the CPUs used",
            ));
        }
        return fine("smt-siblings", evidence);
    }
    Outcome::Found(Finding {
        check: "smt-siblings",
        what: "an SMT sibling of a CPU to be used is busy with other work: the two \
               share one core's caches and execution units"
            .into(),
        evidence,
        fix: "stop the work on the sibling, include it in --pin, or take the \
              sibling offline (echo 0 > /sys/devices/system/cpu/cpuN/online)"
            .into(),
        tune: Vec::new(),
    })
}

pub fn runnable(root: &Path) -> Outcome {
    let load = read_trimmed(root, "/proc/loadavg");
    let stat = read_text(root, "/proc/stat");
    let running = stat
        .lines()
        .find_map(|l| l.strip_prefix("procs_running"))
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut evidence = Vec::new();
    if let Some(l) = &load {
        evidence.push(ev("/proc/loadavg", l.clone()));
    }
    if let Some(r) = running {
        evidence.push(ev("/proc/stat procs_running", r.to_string()));
    }
    let load1 = load
        .as_deref()
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok());
    // doctor itself is one of the running.
    let others = running.map_or(0, |r| r.saturating_sub(1));
    if others == 0 && load1.is_none_or(|l| l < 0.5) {
        return fine("other-load", evidence);
    }
    Outcome::Found(Finding {
        check: "other-load",
        what: "other processes are running or queued: they take CPU time and \
               caches from the measurement"
            .into(),
        evidence,
        fix: "stop them (top, ps -eo pid,stat,comm | grep ' R'); vmscale flags \
              samples others disturbed, and --wait-quiet waits for a quiet machine"
            .into(),
        tune: Vec::new(),
    })
}

pub fn aslr(root: &Path) -> Outcome {
    let p = "/proc/sys/kernel/randomize_va_space";
    let Some(v) = read_trimmed(root, p) else {
        return fine("aslr", Vec::new());
    };
    if v == "0" {
        return fine("aslr", vec![ev(p, v)]);
    }
    Outcome::Found(Finding {
        check: "aslr",
        what: "address-space layout randomisation: stacks, heaps and mappings move \
               between runs, so cache-set and TLB conflicts (latency, c2c) differ \
               from one run to the next"
            .into(),
        evidence: vec![ev(p, v)],
        fix: "compare several runs, or disable it for the measurement \
              (run --tune sets randomize_va_space=0 and restores it; it weakens \
              the machine's security meanwhile)"
            .into(),
        tune: tune("randomize_va_space", "0"),
    })
}

pub fn interrupts(root: &Path, cpus: &[usize], act: &Activity) -> Outcome {
    let text = read_text(root, "/proc/interrupts");
    if text.is_empty() {
        return fine("interrupts", Vec::new());
    }
    let total = device_irqs(&text);
    let uptime = read_trimmed(root, "/proc/uptime")
        .and_then(|u| u.split_whitespace().next()?.parse::<f64>().ok())
        .filter(|u| *u > 0.0);
    let mut evidence = Vec::new();
    let mut busy = false;
    for c in cpus {
        let Some(n) = total.get(c) else { continue };
        // The window's rate when watched, else the average since boot.
        let rate = if act.window_s > 0.0 {
            act.irqs.get(c).map(|d| *d as f64 / act.window_s)
        } else {
            uptime.map(|u| *n as f64 / u)
        };
        let shown = rate.map_or(String::new(), |r| format!(", {r:.0}/s"));
        evidence.push(ev(
            "/proc/interrupts",
            format!("cpu{c}: {n} device interrupts{shown}"),
        ));
        busy |= rate.is_some_and(|r| r > IRQ_RATE);
    }
    if !busy {
        return fine("interrupts", evidence);
    }
    Outcome::Found(Finding {
        check: "interrupts",
        what: format!(
            "device interrupts arrive on CPUs to be used (over {IRQ_RATE:.0}/s): \
             each steals time and cache from the sample"
        ),
        evidence,
        fix: "steer them elsewhere: write a mask without these CPUs to \
              /proc/irq/N/smp_affinity (stop irqbalance first), or pin the run \
              to other CPUs"
            .into(),
        tune: Vec::new(),
    })
}

pub fn perf_paranoid(root: &Path, euid: Option<u32>) -> Outcome {
    let p = "/proc/sys/kernel/perf_event_paranoid";
    let Some(v) = read_trimmed(root, p) else {
        return fine("perf-paranoid", Vec::new());
    };
    let level: i64 = v.parse().unwrap_or(2);
    if euid == Some(0) || level < 2 {
        return fine("perf-paranoid", vec![ev(p, v)]);
    }
    Outcome::Found(Finding {
        check: "perf-paranoid",
        what: format!(
            "perf_event_paranoid {level} keeps kernel stacks from a non-root \
             --profile: the kernel's share of a figure is not explained"
        ),
        evidence: vec![ev(p, v)],
        fix: "run vmscale as root, or write 1 to /proc/sys/kernel/perf_event_paranoid".into(),
        tune: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_interrupts_skip_kernel_lines() {
        let t = "           CPU0       CPU1\n  24:   5   7  IO-APIC 5-edge ACPI\n\
                 28:  10   0  PCI-MSIX virtio0\nLOC:  999  999  Local timer\n";
        let m = device_irqs(t);
        assert_eq!(m[&0], 15);
        assert_eq!(m[&1], 7);
        assert!(device_irqs("").is_empty());
    }

    #[test]
    fn a_busy_sibling_outside_the_cpus_is_found() {
        let root = crate::scratch::at("");
        for (c, s) in [(0, "0,2"), (2, "0,2")] {
            let d = root.join(format!("sys/devices/system/cpu/cpu{c}/topology"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("thread_siblings_list"), s).unwrap();
        }
        let act = |busy: u64| Activity {
            window_s: 1.0,
            cpu_ticks: [(0, (100, 100)), (2, (busy, 100))].into(),
            steal: (0, 200),
            irqs: BTreeMap::new(),
        };
        assert!(matches!(
            smt_siblings(&root, &[0], &act(80)),
            Outcome::Found(_)
        ));
        assert!(matches!(
            smt_siblings(&root, &[0], &act(2)),
            Outcome::Clear(_)
        ));
        // Both siblings used: none outside.
        assert!(matches!(
            smt_siblings(&root, &[0, 2], &act(80)),
            Outcome::Clear(_)
        ));
    }
}
