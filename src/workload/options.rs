//! Helpers the workloads' option parsers share: comma lists, and the machine facts
//! options default to.

use crate::machine::Snapshot;

/// A comma-separated list, trimmed, empty items left out.
pub fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A closed-set option's value by the name clap gives it (serde gives
/// the same name: the enums say so with `rename_all`, and each workload's
/// tests check it through its stored config).
pub fn name<E: clap::ValueEnum>(v: &E) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

/// A case's variant as the closed set of options it was built from; a
/// name outside it is a bug in the workload, not bad input.
pub fn variant<E: clap::ValueEnum>(case: &super::Case) -> crate::error::Result<E> {
    E::from_str(&case.variant, false)
        .map_err(|_| crate::error::Error::Failed(format!("bad case variant '{}'", case.variant)))
}

/// Each of `outer` with each of `inner`, outer first, named by `name`:
/// the variants of a workload that runs every pairing of two options.
pub fn each_with<A, B>(outer: &[A], inner: &[B], name: impl Fn(&A, &B) -> String) -> Vec<String> {
    let name = &name;
    outer
        .iter()
        .flat_map(|a| inner.iter().map(move |b| name(a, b)))
        .collect()
}

/// The base page size (4096 if unknown).
pub fn page_size(m: &Snapshot) -> u64 {
    m.page_size.unwrap_or(4096)
}

/// The online CPU count, at least 1: what `--tasks auto` goes up to.
pub fn online(m: &Snapshot) -> usize {
    m.cpus.len().max(1)
}

/// The coherency line size of the first-level data cache (64 if unknown).
pub fn line_size(m: &Snapshot) -> u64 {
    m.caches
        .iter()
        .filter(|c| c.level == 1 && c.kind != "Instruction")
        .find_map(|c| c.line_size)
        .unwrap_or(64)
}

/// `--tasks`: a list, a range, or `auto`: 1, 2, 4 ... up to the online
/// CPUs, plus the topology's boundaries between them (the CPUs of 1, 2,
/// 4 ... nodes and of each count of packages), where scaling changes.
pub fn tasks(text: &str, m: &Snapshot) -> crate::error::Result<Vec<usize>> {
    let mut out = crate::parse::tasks(text, online(m))?;
    if text.trim() == "auto" {
        let cpus = online(m);
        let mut add = |per: usize, groups: usize| {
            let mut k = 1;
            while per > 0 && k <= groups && per * k <= cpus {
                out.push(per * k);
                k *= 2;
            }
            out.push((per * groups).min(cpus));
        };
        let with_cpus: Vec<usize> = m
            .nodes
            .iter()
            .map(|n| n.cpus.len())
            .filter(|&n| n > 0)
            .collect();
        if with_cpus.len() > 1 {
            add(with_cpus[0], with_cpus.len());
        }
        let packages = m.packages().len();
        if packages > 1 {
            add(cpus / packages, packages);
        }
        out.sort_unstable();
        out.dedup();
    }
    Ok(out)
}

/// `run quick`'s task counts past 8 CPUs: one task, one node's CPUs (or
/// one package's) and all of them, so the suite's cases stay few on 1024
/// CPUs. `None` on smaller machines, whose
/// entries keep `--tasks auto`.
pub fn quick_tasks(m: &Snapshot) -> Option<String> {
    let cpus = online(m);
    if cpus <= QUICK_SMALL {
        return None;
    }
    let mut t = vec![1, cpus];
    match m.nodes.iter().find(|n| !n.cpus.is_empty()) {
        Some(n) if n.cpus.len() < cpus => t.push(n.cpus.len()),
        _ => t.push(cpus / m.packages().len().max(1)),
    }
    t.retain(|&n| n >= 1 && n <= cpus);
    t.sort_unstable();
    t.dedup();
    Some(t.iter().map(usize::to_string).collect::<Vec<_>>().join(","))
}

/// Machines up to this many CPUs run the quick suite as it always was.
pub const QUICK_SMALL: usize = 8;

/// Work per task for `run quick`: `per_task` up to 8 CPUs, scaled down
/// past them so the contended total stays that of 8 tasks (at least
/// `floor`).
pub fn quick_ops(m: &Snapshot, per_task: u64, floor: u64) -> u64 {
    let cpus = online(m) as u64;
    if cpus <= QUICK_SMALL as u64 {
        return per_task;
    }
    (per_task * QUICK_SMALL as u64 / cpus).max(floor)
}

/// A quick entry's arguments with `--tasks` from [`quick_tasks`] added on
/// a big machine.
pub fn with_quick_tasks(m: &Snapshot, line: &str) -> Vec<String> {
    let mut a = super::spec::args(line);
    if let Some(t) = quick_tasks(m) {
        a.push("--tasks".into());
        a.push(t);
    }
    a
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    /// Stored cases and configs carry serde's name, the command line
    /// clap's: they must be one name.
    fn same_names<E: ValueEnum + serde::Serialize>() {
        for v in E::value_variants() {
            assert_eq!(serde_json::to_value(v).unwrap(), super::name(v));
        }
    }

    #[test]
    fn closed_sets_have_one_name_on_the_command_line_and_in_the_store() {
        same_names::<crate::workload::atomic::Variant>();
        same_names::<crate::workload::lockfan::Kind>();
        same_names::<crate::workload::latency::PageKind>();
        same_names::<crate::workload::wis::Test>();
        same_names::<crate::workload::c2c::Variant>();
        same_names::<crate::exec::Mode>();
    }
}
