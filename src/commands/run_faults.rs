//! `vmscale run` for the fault workloads: pft's backing, sharing, access and
//! page options turned into a validated mapping (hugetlb refused with the
//! numbers unless reserved with `--knob nr_hugepages=N`), will-it-scale's VM
//! tests (`wis`) and `mmap-lock`.

use super::{Error, Result};
use crate::cli::{MmapLockArgs, PftArgs, WisArgs};
use crate::exec::{Mode, pin::Pin};
use crate::machine::Snapshot;
use crate::parse;
use crate::workload::fault_map::{self, PageKind, Spec};
use crate::workload::{mmap_lock, pft, wis};

use crate::error::input;

/// Completes pft's configuration with the mapping options and checks it.
pub fn pft_with_mapping(mut cfg: pft::Config, a: &PftArgs, m: &Snapshot) -> Result<pft::Pft> {
    let pages = match (&a.pages, cfg.thp) {
        (None, pft::Thp::Always) => PageKind::Thp,
        (None, pft::Thp::Never) => PageKind::Base,
        (Some(p), thp) => {
            let p: PageKind = input(p.parse())?;
            if thp == pft::Thp::Always && p != PageKind::Thp {
                return Err(Error::Input(
                    "--thp always asks for THP: drop it, or use --pages thp alone".into(),
                ));
            }
            p
        }
    };
    cfg.map = Spec {
        backing: input(a.backing.parse())?,
        path: a.path.clone(),
        shared: a.shared,
        access: input(a.access.parse())?,
        pages,
    };
    // A knob the run sets counts instead of the machine's value now.
    let plan = input(crate::knobs::Plan::parse(&a.harness.knob))?;
    let set = |name: &str| {
        plan.knobs
            .iter()
            .find(|(k, _)| k.name == name)
            .and_then(|(_, v)| v.first().cloned())
    };
    let thp = set("thp").or_else(|| m.thp_enabled.clone());
    let shmem = set("thp_shmem").or_else(pft::read_shmem_enabled);
    input(cfg.map.check(thp.as_deref(), shmem.as_deref()))?;
    if let Some(path) = &cfg.map.path
        && std::fs::symlink_metadata(path).is_ok()
    {
        return Err(Error::Input(format!(
            "--path {} already exists: vmscale creates the file itself and never reuses one; \
             remove it or name a new path",
            path.display()
        )));
    }
    let (free, hugetlb_size) = fault_map::hugetlb_free();
    cfg.huge_size = match pages {
        PageKind::Base => 0,
        PageKind::Thp => m.thp_pmd_size.unwrap_or(2 << 20),
        PageKind::Hugetlb => hugetlb_size,
    };
    if pages == PageKind::Thp
        && cfg.thp == pft::Thp::Never
        && cfg.map.backing == fault_map::Backing::Anon
    {
        cfg.thp = pft::Thp::Always;
    }
    let w = input(pft::Pft::new(cfg, m.clone()))?;
    check_hugetlb(&w, free, hugetlb_size, a, m)?;
    Ok(w)
}

/// Hugetlb pages must be reserved: free ones now, or the smallest value a
/// `--knob nr_hugepages=...` sets (which must fit in available memory).
fn check_hugetlb(w: &pft::Pft, free: u64, size: u64, a: &PftArgs, m: &Snapshot) -> Result<()> {
    let need = w.hugetlb_pages_needed();
    if need == 0 {
        return Ok(());
    }
    let plan = input(crate::knobs::Plan::parse(&a.harness.knob))?;
    let asked = plan
        .knobs
        .iter()
        .find(|(k, _)| k.name == "nr_hugepages")
        .map(|(_, v)| {
            v.iter()
                .filter_map(|x| x.parse::<u64>().ok())
                .min()
                .unwrap_or(0)
        });
    match asked {
        None if free < need => Err(Error::Input(format!(
            "--pages hugetlb needs {need} huge pages of {} but {free} are free \
             (HugePages_Free in /proc/meminfo): reserve them for this run with \
             --knob nr_hugepages={need}",
            parse::format_size(size)
        ))),
        None => Ok(()),
        Some(n) if n < need => Err(Error::Input(format!(
            "--knob nr_hugepages={n} reserves fewer than the {need} huge pages of {} \
             the largest case needs: use --knob nr_hugepages={need}",
            parse::format_size(size)
        ))),
        Some(n) => {
            let avail = m.mem_available_kib.unwrap_or(0) * 1024;
            let total = m.mem_total_kib.unwrap_or(0) * 1024;
            let usable = avail.saturating_sub((total / 16).max(256 << 20));
            if n.saturating_mul(size) > usable {
                return Err(Error::Input(format!(
                    "--knob nr_hugepages={n} would reserve {} but only {} can be used safely: \
                     reserve fewer",
                    parse::format_size(n.saturating_mul(size)),
                    parse::format_size(usable)
                )));
            }
            Ok(())
        }
    }
}

/// `--mode thread,process` (either order, or one of them).
fn modes(text: &str) -> Result<Vec<Mode>> {
    let mut out = Vec::new();
    for m in text.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let m: Mode = input(m.parse())?;
        if !out.contains(&m) {
            out.push(m);
        }
    }
    Ok(out)
}

pub fn wis_from_args(a: &WisArgs, m: &Snapshot) -> Result<wis::Wis> {
    let default = match a.test.as_str() {
        "tlb_flush2" => "1M",
        _ => "128M",
    };
    let cfg = wis::Config {
        test: a.test.clone(),
        tasks: input(parse::tasks(&a.tasks, m.cpus.len().max(1)))?,
        modes: modes(&a.mode)?,
        size: input(parse::size_arg(
            "--size",
            a.size.as_deref().unwrap_or(default),
        ))?,
        secs: a.time,
        every: a.every,
        dir: a.dir.clone().unwrap_or_else(std::env::temp_dir),
        pin: input(a.pin.parse::<Pin>())?,
        page_size: m.page_size.unwrap_or(4096),
    };
    input(wis::Wis::new(cfg, m.clone()))
}

pub fn mmap_lock_from_args(a: &MmapLockArgs, m: &Snapshot) -> Result<mmap_lock::MmapLock> {
    let changers = a
        .changers
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| {
            c.parse::<usize>().map_err(|_| {
                Error::Input(format!(
                    "--changers '{}': '{c}' is not a count; use e.g. 0,1,2",
                    a.changers
                ))
            })
        })
        .collect::<Result<Vec<usize>>>()?;
    let cfg = mmap_lock::Config {
        tasks: input(parse::tasks(&a.tasks, m.cpus.len().max(1)))?,
        changers,
        size: input(parse::size_arg("--size", &a.size))?,
        rate: a.rate,
        secs: a.time,
        pin: input(a.pin.parse::<Pin>())?,
        page_size: m.page_size.unwrap_or(4096),
    };
    input(mmap_lock::MmapLock::new(cfg, m.clone()))
}
