//! The known kernel knobs: short name, file under the root, and the values
//! the kernel accepts. Only these can be set; a value is checked here before
//! anything is written.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// What values a knob accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Values {
    /// One of these words (sysfs selections such as THP `enabled`).
    Words(&'static [&'static str]),
    /// An integer in this inclusive range.
    Range(i64, i64),
    /// 0, or an integer in this inclusive range (0 means "kernel default").
    ZeroOr(i64, i64),
}

/// One settable knob.
#[derive(Debug, PartialEq)]
pub struct Knob {
    /// The short name used on the command line and in case labels.
    pub name: &'static str,
    /// Other accepted names, such as the sysctl name.
    pub aliases: &'static [&'static str],
    /// Path relative to the root (`/` on a live machine).
    pub path: &'static str,
    pub values: Values,
    pub about: &'static str,
}

/// Every knob vmscale knows, in the order `--knob` help lists them.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "thp",
        aliases: &["thp_enabled", "transparent_hugepage.enabled"],
        path: "sys/kernel/mm/transparent_hugepage/enabled",
        values: Values::Words(&["always", "madvise", "never"]),
        about: "transparent huge pages for anonymous memory",
    },
    Knob {
        name: "thp_defrag",
        aliases: &["transparent_hugepage.defrag"],
        path: "sys/kernel/mm/transparent_hugepage/defrag",
        values: Values::Words(&["always", "defer", "defer+madvise", "madvise", "never"]),
        about: "direct compaction on THP faults",
    },
    Knob {
        name: "thp_shmem",
        aliases: &["transparent_hugepage.shmem_enabled"],
        path: "sys/kernel/mm/transparent_hugepage/shmem_enabled",
        values: Values::Words(&["always", "within_size", "advise", "never", "deny", "force"]),
        about: "transparent huge pages for shmem/tmpfs",
    },
    Knob {
        name: "khugepaged_defrag",
        aliases: &["transparent_hugepage.khugepaged.defrag"],
        path: "sys/kernel/mm/transparent_hugepage/khugepaged/defrag",
        values: Values::Range(0, 1),
        about: "khugepaged compacts to collapse huge pages",
    },
    Knob {
        name: "khugepaged_pages_to_scan",
        aliases: &["transparent_hugepage.khugepaged.pages_to_scan"],
        path: "sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan",
        values: Values::Range(1, i32::MAX as i64),
        about: "pages khugepaged scans each time it wakes",
    },
    Knob {
        name: "khugepaged_scan_sleep",
        aliases: &["transparent_hugepage.khugepaged.scan_sleep_millisecs"],
        path: "sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs",
        values: Values::Range(0, i32::MAX as i64),
        about: "milliseconds khugepaged sleeps between scans",
    },
    Knob {
        name: "khugepaged_max_ptes_none",
        aliases: &["transparent_hugepage.khugepaged.max_ptes_none"],
        path: "sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none",
        values: Values::Range(0, 511),
        about: "empty pages khugepaged may fill to collapse a huge page",
    },
    Knob {
        name: "numa_balancing",
        aliases: &["kernel.numa_balancing"],
        path: "proc/sys/kernel/numa_balancing",
        values: Values::Range(0, 3),
        about: "automatic NUMA balancing (1 normal, 2 memory tiering)",
    },
    Knob {
        name: "pcp_high_fraction",
        aliases: &["vm.percpu_pagelist_high_fraction"],
        path: "proc/sys/vm/percpu_pagelist_high_fraction",
        values: Values::ZeroOr(8, i32::MAX as i64),
        about: "per-CPU page list high mark as a fraction of the zone",
    },
    Knob {
        name: "zone_reclaim",
        aliases: &["vm.zone_reclaim_mode"],
        path: "proc/sys/vm/zone_reclaim_mode",
        values: Values::Range(0, 7),
        about: "reclaim on the local node before going off-node",
    },
    Knob {
        name: "overcommit",
        aliases: &["vm.overcommit_memory"],
        path: "proc/sys/vm/overcommit_memory",
        values: Values::Range(0, 2),
        about: "overcommit policy",
    },
    Knob {
        name: "swappiness",
        aliases: &["vm.swappiness"],
        path: "proc/sys/vm/swappiness",
        values: Values::Range(0, 200),
        about: "reclaim preference for anonymous versus file pages",
    },
    Knob {
        name: "stat_interval",
        aliases: &["vm.stat_interval"],
        path: "proc/sys/vm/stat_interval",
        values: Values::Range(1, 3600),
        about: "seconds between per-CPU vm statistics folds",
    },
    Knob {
        name: "compaction_proactiveness",
        aliases: &["vm.compaction_proactiveness"],
        path: "proc/sys/vm/compaction_proactiveness",
        values: Values::Range(0, 100),
        about: "background compaction effort",
    },
    Knob {
        name: "extfrag_threshold",
        aliases: &["vm.extfrag_threshold"],
        path: "proc/sys/vm/extfrag_threshold",
        values: Values::Range(0, 1000),
        about: "fragmentation index above which compaction is tried before reclaim",
    },
    Knob {
        name: "compact_unevictable",
        aliases: &["vm.compact_unevictable_allowed"],
        path: "proc/sys/vm/compact_unevictable_allowed",
        values: Values::Range(0, 1),
        about: "compaction may move mlocked pages",
    },
    Knob {
        name: "watermark_scale_factor",
        aliases: &["vm.watermark_scale_factor"],
        path: "proc/sys/vm/watermark_scale_factor",
        values: Values::Range(1, 3000),
        about: "kswapd watermark distance, in 1/10000 of memory",
    },
    Knob {
        name: "page_reporting_order",
        aliases: &["page_reporting.page_reporting_order"],
        path: "sys/module/page_reporting/parameters/page_reporting_order",
        values: Values::Range(0, 10),
        about: "smallest free block (2^order pages) a guest reports to its host",
    },
    Knob {
        name: "randomize_va_space",
        aliases: &["kernel.randomize_va_space"],
        path: "proc/sys/kernel/randomize_va_space",
        values: Values::Range(0, 2),
        about: "address-space layout randomisation (0 off, 2 full)",
    },
    Knob {
        name: "no_turbo",
        aliases: &["intel_pstate.no_turbo"],
        path: "sys/devices/system/cpu/intel_pstate/no_turbo",
        values: Values::Range(0, 1),
        about: "intel_pstate: 1 keeps the CPUs out of turbo",
    },
    Knob {
        name: "cpu_boost",
        aliases: &["cpufreq.boost"],
        path: "sys/devices/system/cpu/cpufreq/boost",
        values: Values::Range(0, 1),
        about: "cpufreq frequency boost (0 off)",
    },
    Knob {
        name: "nr_hugepages",
        aliases: &["vm.nr_hugepages"],
        path: "proc/sys/vm/nr_hugepages",
        values: Values::Range(0, 1 << 20),
        about: "hugetlb pages of the default size kept reserved",
    },
    Knob {
        name: "ksm_run",
        aliases: &["ksm.run"],
        path: "sys/kernel/mm/ksm/run",
        values: Values::Range(0, 1),
        about: "ksmd merging identical pages (1 runs it; vms' ksm case needs it)",
    },
];

/// Finds a knob by its short name or an alias.
pub fn find(name: &str) -> Option<&'static Knob> {
    KNOBS
        .iter()
        .find(|k| k.name == name || k.aliases.contains(&name))
}

/// The list of names, for error messages.
pub fn names() -> String {
    KNOBS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

impl Knob {
    pub fn file(&self, root: &Path) -> PathBuf {
        root.join(self.path)
    }

    /// What the kernel accepts, in words, for messages.
    pub fn accepted(&self) -> String {
        match self.values {
            Values::Words(w) => w.join(", "),
            Values::Range(a, b) => format!("an integer {a}..{b}"),
            Values::ZeroOr(a, b) => format!("0 or an integer {a}..{b}"),
        }
    }

    /// Checks a value and returns it in the form the kernel reads back.
    pub fn validate(&self, value: &str) -> Result<String> {
        let v = value.trim();
        let bad = || {
            Error::Input(format!(
                "knob {}: '{value}' is not a value it takes; use {}",
                self.name,
                self.accepted()
            ))
        };
        match self.values {
            Values::Words(words) => words
                .iter()
                .find(|w| **w == v)
                .map(|w| w.to_string())
                .ok_or_else(bad),
            Values::Range(a, b) => match v.parse::<i64>() {
                Ok(n) if (a..=b).contains(&n) => Ok(n.to_string()),
                _ => Err(bad()),
            },
            Values::ZeroOr(a, b) => match v.parse::<i64>() {
                Ok(n) if n == 0 || (a..=b).contains(&n) => Ok(n.to_string()),
                _ => Err(bad()),
            },
        }
    }

    /// The current value: the bracketed word of a sysfs selection
    /// ("always [madvise] never" -> "madvise"), else the trimmed content.
    pub fn read(&self, root: &Path) -> Result<String> {
        let f = self.file(root);
        let text = read_nofollow(&f)
            .map_err(|e| Error::io(format!("knob {}: cannot read", self.name), &f, e))?;
        Ok(current(&text))
    }

    /// Writes a value (already validated) and reads it back.
    pub fn write_verified(&self, root: &Path, value: &str) -> Result<()> {
        write_verified(self.name, &self.file(root), value)
    }
}

/// Writes `value` to a knob file and reads it back; a difference is an error.
pub fn write_verified(name: &str, file: &Path, value: &str) -> Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(file)
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| Error::io(format!("knob {name}: cannot write '{value}' to"), file, e))?;
    let got = read_nofollow(file)
        .map(|t| current(&t))
        .map_err(|e| Error::io(format!("knob {name}: cannot read back"), file, e))?;
    if got != value {
        return Err(Error::Failed(format!(
            "knob {name}: wrote '{value}' to {} but it reads back '{got}'",
            file.display()
        )));
    }
    Ok(())
}

/// A knob file's text; a symbolic link is not followed.
fn read_nofollow(file: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(file)?
        .read_to_string(&mut text)?;
    Ok(text)
}

/// The selected value of a knob file's text.
pub fn current(text: &str) -> String {
    let t = text.trim();
    match (t.find('['), t.find(']')) {
        (Some(a), Some(b)) if a < b => t[a + 1..b].to_string(),
        _ => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(find("thp_defrag").unwrap().name, "thp_defrag");
        assert_eq!(
            find("kernel.numa_balancing").unwrap().name,
            "numa_balancing"
        );
        assert_eq!(
            find("vm.percpu_pagelist_high_fraction").unwrap().name,
            "pcp_high_fraction"
        );
        assert!(find("vm.nonsense").is_none());
        let mut seen = std::collections::BTreeSet::new();
        for k in KNOBS {
            for n in std::iter::once(&k.name).chain(k.aliases) {
                assert!(seen.insert(*n), "{n} named twice");
            }
        }
    }

    #[test]
    fn values_are_validated() {
        let defrag = find("thp_defrag").unwrap();
        assert_eq!(defrag.validate(" defer+madvise").unwrap(), "defer+madvise");
        assert!(
            defrag
                .validate("sometimes")
                .unwrap_err()
                .to_string()
                .contains("madvise")
        );
        let nb = find("numa_balancing").unwrap();
        assert_eq!(nb.validate("1").unwrap(), "1");
        crate::error::assert_input(nb.validate("4"));
        crate::error::assert_input(nb.validate("x"));
        let pcp = find("pcp_high_fraction").unwrap();
        assert_eq!(pcp.validate("0").unwrap(), "0");
        assert_eq!(pcp.validate("08").unwrap(), "8");
        crate::error::assert_input(pcp.validate("4"));
    }

    #[test]
    fn selection_is_read_from_brackets() {
        assert_eq!(
            current("always defer defer+madvise [madvise] never\n"),
            "madvise"
        );
        assert_eq!(current("60\n"), "60");
        assert_eq!(current("never"), "never");
    }

    #[test]
    fn live_knobs_read_where_present() {
        for k in KNOBS {
            if k.file(Path::new("/")).exists() {
                let v = k.read(Path::new("/")).unwrap();
                assert!(k.validate(&v).is_ok(), "{} reads '{v}'", k.name);
            }
        }
    }
}
