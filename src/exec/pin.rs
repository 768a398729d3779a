//! Task placement: which CPU each task runs on, planned from the topology
//! read at run time, and the pinning itself (a failed pin is an error).

use crate::error::{Error, Result};
use crate::machine::{CoreKey, Cpu, Snapshot, cpulist};
use serde::{Deserialize, Serialize};

/// A placement policy as given by `--pin`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pin {
    /// Fill a package before the next; SMT siblings next to each other.
    Compact,
    /// Round-robin over nodes (or packages), whole cores before siblings.
    Spread,
    /// Leave placement to the scheduler.
    None,
    /// Exactly these CPUs, in this order, wrapping round.
    List(Vec<usize>),
}

impl std::str::FromStr for Pin {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "compact" => Ok(Pin::Compact),
            "spread" => Ok(Pin::Spread),
            "none" => Ok(Pin::None),
            list => {
                let cpus = cpulist::parse(list).map_err(|e| {
                    Error::Input(format!(
                        "--pin '{s}': {e}; use compact, spread, none or a CPU list like 0-3,8"
                    ))
                })?;
                if cpus.is_empty() {
                    return Err(Error::Input("--pin needs at least one CPU".into()));
                }
                Ok(Pin::List(cpus))
            }
        }
    }
}

impl std::fmt::Display for Pin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pin::Compact => f.write_str("compact"),
            Pin::Spread => f.write_str("spread"),
            Pin::None => f.write_str("none"),
            Pin::List(c) => f.write_str(&cpulist::format(c)),
        }
    }
}

/// The CPU for each of `tasks` tasks (`None` = unpinned).
pub fn plan(pin: &Pin, tasks: usize, machine: &Snapshot) -> Result<Vec<Option<usize>>> {
    let order = match pin {
        Pin::None => return Ok(vec![None; tasks]),
        Pin::Compact => compact_order(machine),
        Pin::Spread => spread_order(machine),
        Pin::List(cpus) => {
            let online = machine.online_cpus();
            if let Some(bad) = cpus.iter().find(|c| !online.contains(c)) {
                return Err(Error::Input(format!(
                    "--pin names CPU {bad}, which is not online (online: {})",
                    cpulist::format(&online)
                )));
            }
            cpus.clone()
        }
    };
    if order.is_empty() {
        return Err(Error::Failed(
            "no online CPUs found in /sys/devices/system/cpu/online".into(),
        ));
    }
    Ok((0..tasks).map(|i| Some(order[i % order.len()])).collect())
}

/// Position of a CPU among its SMT siblings (0 for the first thread of a core).
fn smt_index(machine: &Snapshot, cpu: usize) -> usize {
    machine
        .cpus
        .iter()
        .find(|c| c.id == cpu)
        .and_then(|c| c.siblings.iter().position(|&s| s == cpu))
        .unwrap_or(0)
}

/// Where a CPU sits, for sorting: its core (package, die, cluster, core
/// id; the CPU id where unknown) and then the CPU id.
fn core_order(c: &Cpu) -> (CoreKey, usize) {
    let key = c
        .core_key()
        .unwrap_or((c.package.unwrap_or(0), c.die, c.cluster, c.id));
    (key, c.id)
}

/// Package by package, die by die, core by core, the threads of a core
/// next to each other.
fn compact_order(machine: &Snapshot) -> Vec<usize> {
    let mut cpus: Vec<&Cpu> = machine.cpus.iter().collect();
    cpus.sort_by_key(|c| core_order(c));
    cpus.iter().map(|c| c.id).collect()
}

/// Round-robin over nodes (packages without node information); within a
/// node the first thread of every core before any second thread.
fn spread_order(machine: &Snapshot) -> Vec<usize> {
    use std::collections::BTreeMap;
    // node -> (SMT index, core order) of its CPUs
    type Slot = (usize, (CoreKey, usize));
    let mut groups: BTreeMap<usize, Vec<Slot>> = BTreeMap::new();
    for c in &machine.cpus {
        let group = c.node.or(c.package).unwrap_or(0);
        groups
            .entry(group)
            .or_default()
            .push((smt_index(machine, c.id), core_order(c)));
    }
    let mut queues: Vec<Vec<usize>> = groups
        .into_values()
        .map(|mut g| {
            g.sort();
            g.into_iter().map(|(_, (_, id))| id).rev().collect()
        })
        .collect();
    let mut order = Vec::new();
    while queues.iter().any(|q| !q.is_empty()) {
        for q in queues.iter_mut() {
            if let Some(cpu) = q.pop() {
                order.push(cpu);
            }
        }
    }
    order
}

/// Pins the calling thread to `cpu` and checks that it took.
pub fn pin_current(cpu: usize) -> Result<()> {
    pin_thread(0, cpu)
}

/// Pins thread `tid` (0: the calling thread) to `cpu` and checks that it
/// took (a guest's vCPU threads are pinned this way).
pub fn pin_thread(tid: libc::pid_t, cpu: usize) -> Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET/CPU_ISSET index within it
    // (checked against CPU_SETSIZE first).
    unsafe {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(Error::Failed(format!("CPU {cpu} is beyond CPU_SETSIZE")));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(Error::Failed(format!(
                "pinning to CPU {cpu} failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        let mut got: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut got) != 0
            || !libc::CPU_ISSET(cpu, &got)
        {
            return Err(Error::Failed(format!(
                "pinning to CPU {cpu} did not take effect"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 packages x 2 cores x 2 threads; siblings are (n, n+4).
    fn machine() -> Snapshot {
        let cpus = (0..8)
            .map(|id| Cpu {
                id,
                package: Some((id % 4) / 2),
                core: Some(id % 2),
                node: Some((id % 4) / 2),
                siblings: vec![id % 4, id % 4 + 4],
                die: None,
                cluster: None,
            })
            .collect();
        Snapshot {
            cpus,
            ..Default::default()
        }
    }

    #[test]
    fn compact_keeps_siblings_together() {
        let p = plan(&Pin::Compact, 4, &machine()).unwrap();
        assert_eq!(p, vec![Some(0), Some(4), Some(1), Some(5)]);
    }

    #[test]
    fn spread_alternates_nodes_and_uses_cores_first() {
        let p = plan(&Pin::Spread, 4, &machine()).unwrap();
        assert_eq!(p, vec![Some(0), Some(2), Some(1), Some(3)]);
    }

    #[test]
    fn list_wraps_and_rejects_offline() {
        let m = machine();
        let p = plan(&Pin::List(vec![3, 5]), 3, &m).unwrap();
        assert_eq!(p, vec![Some(3), Some(5), Some(3)]);
        crate::error::assert_input(plan(&Pin::List(vec![9]), 1, &m));
    }

    #[test]
    fn parse_policies() {
        assert_eq!("spread".parse::<Pin>().unwrap(), Pin::Spread);
        assert_eq!("0-1".parse::<Pin>().unwrap(), Pin::List(vec![0, 1]));
        crate::error::assert_input("fast".parse::<Pin>());
    }
}
