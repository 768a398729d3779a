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
    /// A module's boolean parameter: Y or N (1, 0, y, n accepted), read
    /// back as Y or N.
    YesNo,
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
    /// What the kernel needs for the file to exist, for the knob list and
    /// the refusal when it is missing ("" when any kernel has it).
    pub needs: &'static str,
}

/// What per-size anonymous THP needs (hugepages-<N>kB/enabled).
pub const MTHP_ANON_NEEDS: &str = "Linux 6.8+ (multi-size THP for anonymous memory)";
/// What per-size shmem THP needs (hugepages-<N>kB/shmem_enabled).
pub const MTHP_SHMEM_NEEDS: &str = "Linux 6.11+ (multi-size THP for shmem)";
/// What the zswap knobs need.
const ZSWAP_NEEDS: &str = "a kernel built with CONFIG_ZSWAP";

/// One per-size THP knob: `thp_<size>` (anonymous) or `thp_shmem_<size>`
/// at hugepages-<kb>kB/enabled or shmem_enabled.
macro_rules! mthp {
    (anon $size:literal $kb:literal) => {
        Knob {
            name: concat!("thp_", $size),
            aliases: &[concat!(
                "transparent_hugepage.hugepages-",
                $kb,
                "kB.enabled"
            )],
            path: concat!(
                "sys/kernel/mm/transparent_hugepage/hugepages-",
                $kb,
                "kB/enabled"
            ),
            values: Values::Words(&["always", "inherit", "madvise", "never"]),
            about: concat!("anonymous THP of size ", $size, " (inherit: as knob thp)"),
            needs: MTHP_ANON_NEEDS,
        }
    };
    (shmem $size:literal $kb:literal) => {
        Knob {
            name: concat!("thp_shmem_", $size),
            aliases: &[concat!(
                "transparent_hugepage.hugepages-",
                $kb,
                "kB.shmem_enabled"
            )],
            path: concat!(
                "sys/kernel/mm/transparent_hugepage/hugepages-",
                $kb,
                "kB/shmem_enabled"
            ),
            values: Values::Words(&["always", "inherit", "within_size", "advise", "never"]),
            about: concat!("shmem THP of size ", $size, " (inherit: as knob thp_shmem)"),
            needs: MTHP_SHMEM_NEEDS,
        }
    };
}

/// Every knob vmscale knows, in the order `--knob` help lists them.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "thp",
        aliases: &["thp_enabled", "transparent_hugepage.enabled"],
        path: "sys/kernel/mm/transparent_hugepage/enabled",
        values: Values::Words(&["always", "madvise", "never"]),
        about: "transparent huge pages for anonymous memory",
        needs: "",
    },
    Knob {
        name: "thp_defrag",
        aliases: &["transparent_hugepage.defrag"],
        path: "sys/kernel/mm/transparent_hugepage/defrag",
        values: Values::Words(&["always", "defer", "defer+madvise", "madvise", "never"]),
        about: "direct compaction on THP faults",
        needs: "",
    },
    Knob {
        name: "thp_shmem",
        aliases: &["transparent_hugepage.shmem_enabled"],
        path: "sys/kernel/mm/transparent_hugepage/shmem_enabled",
        values: Values::Words(&["always", "within_size", "advise", "never", "deny", "force"]),
        about: "transparent huge pages for shmem/tmpfs",
        needs: "",
    },
    Knob {
        name: "khugepaged_defrag",
        aliases: &["transparent_hugepage.khugepaged.defrag"],
        path: "sys/kernel/mm/transparent_hugepage/khugepaged/defrag",
        values: Values::Range(0, 1),
        about: "khugepaged compacts to collapse huge pages",
        needs: "",
    },
    Knob {
        name: "khugepaged_pages_to_scan",
        aliases: &["transparent_hugepage.khugepaged.pages_to_scan"],
        path: "sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan",
        values: Values::Range(1, i32::MAX as i64),
        about: "pages khugepaged scans each time it wakes",
        needs: "",
    },
    Knob {
        name: "khugepaged_scan_sleep",
        aliases: &["transparent_hugepage.khugepaged.scan_sleep_millisecs"],
        path: "sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs",
        values: Values::Range(0, i32::MAX as i64),
        about: "milliseconds khugepaged sleeps between scans",
        needs: "",
    },
    Knob {
        name: "khugepaged_max_ptes_none",
        aliases: &["transparent_hugepage.khugepaged.max_ptes_none"],
        path: "sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none",
        values: Values::Range(0, 511),
        about: "empty pages khugepaged may fill to collapse a huge page",
        needs: "",
    },
    Knob {
        name: "numa_balancing",
        aliases: &["kernel.numa_balancing"],
        path: "proc/sys/kernel/numa_balancing",
        values: Values::Range(0, 3),
        about: "automatic NUMA balancing (1 normal, 2 memory tiering)",
        needs: "",
    },
    Knob {
        name: "pcp_high_fraction",
        aliases: &["vm.percpu_pagelist_high_fraction"],
        path: "proc/sys/vm/percpu_pagelist_high_fraction",
        values: Values::ZeroOr(8, i32::MAX as i64),
        about: "per-CPU page list high mark as a fraction of the zone",
        needs: "",
    },
    Knob {
        name: "zone_reclaim",
        aliases: &["vm.zone_reclaim_mode"],
        path: "proc/sys/vm/zone_reclaim_mode",
        values: Values::Range(0, 7),
        about: "reclaim on the local node before going off-node",
        needs: "",
    },
    Knob {
        name: "overcommit",
        aliases: &["vm.overcommit_memory"],
        path: "proc/sys/vm/overcommit_memory",
        values: Values::Range(0, 2),
        about: "overcommit policy",
        needs: "",
    },
    Knob {
        name: "swappiness",
        aliases: &["vm.swappiness"],
        path: "proc/sys/vm/swappiness",
        values: Values::Range(0, 200),
        about: "reclaim preference for anonymous versus file pages",
        needs: "",
    },
    Knob {
        name: "stat_interval",
        aliases: &["vm.stat_interval"],
        path: "proc/sys/vm/stat_interval",
        values: Values::Range(1, 3600),
        about: "seconds between per-CPU vm statistics folds",
        needs: "",
    },
    Knob {
        name: "compaction_proactiveness",
        aliases: &["vm.compaction_proactiveness"],
        path: "proc/sys/vm/compaction_proactiveness",
        values: Values::Range(0, 100),
        about: "background compaction effort",
        needs: "",
    },
    Knob {
        name: "extfrag_threshold",
        aliases: &["vm.extfrag_threshold"],
        path: "proc/sys/vm/extfrag_threshold",
        values: Values::Range(0, 1000),
        about: "fragmentation index above which compaction is tried before reclaim",
        needs: "",
    },
    Knob {
        name: "compact_unevictable",
        aliases: &["vm.compact_unevictable_allowed"],
        path: "proc/sys/vm/compact_unevictable_allowed",
        values: Values::Range(0, 1),
        about: "compaction may move mlocked pages",
        needs: "",
    },
    Knob {
        name: "watermark_scale_factor",
        aliases: &["vm.watermark_scale_factor"],
        path: "proc/sys/vm/watermark_scale_factor",
        values: Values::Range(1, 3000),
        about: "kswapd watermark distance, in 1/10000 of memory",
        needs: "",
    },
    Knob {
        name: "page_reporting_order",
        aliases: &["page_reporting.page_reporting_order"],
        path: "sys/module/page_reporting/parameters/page_reporting_order",
        values: Values::Range(0, 10),
        about: "smallest free block (2^order pages) a guest reports to its host",
        needs: "",
    },
    Knob {
        name: "randomize_va_space",
        aliases: &["kernel.randomize_va_space"],
        path: "proc/sys/kernel/randomize_va_space",
        values: Values::Range(0, 2),
        about: "address-space layout randomisation (0 off, 2 full)",
        needs: "",
    },
    Knob {
        name: "no_turbo",
        aliases: &["intel_pstate.no_turbo"],
        path: "sys/devices/system/cpu/intel_pstate/no_turbo",
        values: Values::Range(0, 1),
        about: "intel_pstate: 1 keeps the CPUs out of turbo",
        needs: "",
    },
    Knob {
        name: "cpu_boost",
        aliases: &["cpufreq.boost"],
        path: "sys/devices/system/cpu/cpufreq/boost",
        values: Values::Range(0, 1),
        about: "cpufreq frequency boost (0 off)",
        needs: "",
    },
    Knob {
        name: "nr_hugepages",
        aliases: &["vm.nr_hugepages"],
        path: "proc/sys/vm/nr_hugepages",
        values: Values::Range(0, 1 << 20),
        about: "hugetlb pages of the default size kept reserved",
        needs: "",
    },
    Knob {
        name: "ksm_run",
        aliases: &["ksm.run"],
        path: "sys/kernel/mm/ksm/run",
        values: Values::Range(0, 1),
        about: "ksmd merging identical pages (1 runs it; vms' ksm case needs it)",
        needs: "",
    },
    Knob {
        name: "ksm_pages_to_scan",
        aliases: &["ksm.pages_to_scan"],
        path: "sys/kernel/mm/ksm/pages_to_scan",
        values: Values::Range(0, 1 << 20),
        about: "pages ksmd scans each time it wakes",
        needs: "",
    },
    Knob {
        name: "ksm_sleep_millisecs",
        aliases: &["ksm.sleep_millisecs"],
        path: "sys/kernel/mm/ksm/sleep_millisecs",
        values: Values::Range(0, 1 << 20),
        about: "milliseconds ksmd sleeps between scans",
        needs: "",
    },
    Knob {
        name: "zswap",
        aliases: &["zswap.enabled"],
        path: "sys/module/zswap/parameters/enabled",
        values: Values::YesNo,
        about: "compressed cache for swapped-out pages (Y on, N off)",
        needs: ZSWAP_NEEDS,
    },
    Knob {
        name: "zswap_compressor",
        aliases: &["zswap.compressor"],
        path: "sys/module/zswap/parameters/compressor",
        values: Values::Words(&["lzo", "lzo-rle", "lz4", "lz4hc", "zstd", "deflate", "842"]),
        about: "zswap's compression algorithm (the kernel must have it)",
        needs: ZSWAP_NEEDS,
    },
    Knob {
        name: "zswap_max_pool_percent",
        aliases: &["zswap.max_pool_percent"],
        path: "sys/module/zswap/parameters/max_pool_percent",
        values: Values::Range(0, 100),
        about: "most of memory zswap's pool may take, in percent",
        needs: ZSWAP_NEEDS,
    },
    // Sizes of a kernel with 4 KiB pages: anonymous orders 2..9, shmem
    // orders 1..9 (Documentation/admin-guide/mm/transhuge.rst).
    mthp!(anon "16K" "16"),
    mthp!(anon "32K" "32"),
    mthp!(anon "64K" "64"),
    mthp!(anon "128K" "128"),
    mthp!(anon "256K" "256"),
    mthp!(anon "512K" "512"),
    mthp!(anon "1M" "1024"),
    mthp!(anon "2M" "2048"),
    mthp!(shmem "8K" "8"),
    mthp!(shmem "16K" "16"),
    mthp!(shmem "32K" "32"),
    mthp!(shmem "64K" "64"),
    mthp!(shmem "128K" "128"),
    mthp!(shmem "256K" "256"),
    mthp!(shmem "512K" "512"),
    mthp!(shmem "1M" "1024"),
    mthp!(shmem "2M" "2048"),
];

/// Finds a knob by its short name or an alias.
pub fn find(name: &str) -> Option<&'static Knob> {
    KNOBS
        .iter()
        .find(|k| k.name == name || k.aliases.contains(&name))
}

/// Whether a knob is one of the per-size THP knobs.
pub fn per_size_thp(k: &Knob) -> bool {
    k.path.contains("/hugepages-")
}

/// The list of names, for error messages; the per-size THP knobs as two
/// patterns.
pub fn names() -> String {
    let mut n: Vec<&str> = KNOBS
        .iter()
        .filter(|k| !per_size_thp(k))
        .map(|k| k.name)
        .collect();
    n.push("thp_<size> (16K..2M), thp_shmem_<size> (8K..2M)");
    n.join(", ")
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
            Values::YesNo => "Y or N (1 or 0)".into(),
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
            Values::YesNo => match v {
                "Y" | "y" | "1" => Ok("Y".into()),
                "N" | "n" | "0" => Ok("N".into()),
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
    fn per_size_thp_and_zswap_knobs() {
        let k = find("thp_64K").unwrap();
        assert_eq!(
            k.path,
            "sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"
        );
        assert_eq!(k.validate("inherit").unwrap(), "inherit");
        crate::error::assert_input(k.validate("within_size"));
        assert_eq!(
            find("transparent_hugepage.hugepages-2048kB.shmem_enabled")
                .unwrap()
                .name,
            "thp_shmem_2M"
        );
        let shmem = find("thp_shmem_8K").unwrap();
        assert_eq!(shmem.validate("within_size").unwrap(), "within_size");
        assert!(shmem.needs.contains("6.11"));
        assert!(find("thp_8K").is_none(), "no anonymous THP of order 1");
        let z = find("zswap").unwrap();
        assert_eq!(z.validate("1").unwrap(), "Y");
        assert_eq!(z.validate("n").unwrap(), "N");
        crate::error::assert_input(z.validate("yes"));
        assert_eq!(
            find("zswap.compressor").unwrap().validate("zstd").unwrap(),
            "zstd"
        );
        crate::error::assert_input(find("zswap_max_pool_percent").unwrap().validate("101"));
        // The list in messages names the sizes by pattern, not one by one.
        let n = names();
        assert!(
            n.contains("thp_<size> (16K..2M)") && !n.contains("thp_64K"),
            "{n}"
        );
        assert!(n.contains("zswap_compressor"), "{n}");
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
