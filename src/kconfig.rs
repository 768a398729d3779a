//! What vmscale needs from a guest kernel's configuration: one list of
//! options, each with who needs it (every guest, a guest of more than one
//! vCPU or node, or some workloads) and why. The same list checks a
//! prebuilt kernel's `.config` before it boots (`check`) and is the
//! fragment a tree build merges into its base config (`fragment`), so the
//! two never disagree. A kernel built without one of these boots, then
//! fails in ways that do not name the cause (a store that is "locked"
//! without `FILE_LOCKING`, "pgfault rose by 0" without
//! `VM_EVENT_COUNTERS`, one online CPU of two without `SMP`).

use std::collections::BTreeMap;

/// Who needs an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Every guest: without it the guest cannot reach init, run vmscale,
    /// keep its store or bring its results back.
    Guest,
    /// A guest given more than one vCPU.
    Cpus,
    /// A guest given more than one NUMA node.
    Nodes,
    /// Only the workloads or options named.
    Workloads(&'static str),
}

/// The value an option must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// `=y`.
    BuiltIn,
    /// `=y` or `=m` (a module the guest loads from its initramfs).
    Enabled,
}

/// One option vmscale needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    /// The option without its `CONFIG_` prefix.
    pub name: &'static str,
    pub want: Want,
    pub need: Need,
    pub why: &'static str,
}

const fn req(name: &'static str, want: Want, need: Need, why: &'static str) -> Requirement {
    Requirement {
        name,
        want,
        need,
        why,
    }
}

use Need::{Cpus, Guest, Nodes, Workloads as Only};
use Want::{BuiltIn, Enabled};

/// Everything vmscale needs from a guest kernel (x86-64), one line an option.
#[rustfmt::skip]
pub const REQUIRED: &[Requirement] = &[
    req("64BIT", BuiltIn, Guest, "runs the x86-64 vmscale binary"),
    req("BLK_DEV_INITRD", BuiltIn, Guest, "the guest's root is an initramfs"),
    req("BINFMT_ELF", BuiltIn, Guest, "runs busybox and vmscale"),
    req("BINFMT_SCRIPT", BuiltIn, Guest, "/init is a shell script"),
    req("DEVTMPFS", BuiltIn, Guest, "/init mounts devtmpfs for /dev/vda"),
    req("PROC_FS", BuiltIn, Guest, "vmscale reads /proc"),
    req("SYSFS", BuiltIn, Guest, "vmscale reads the topology from /sys"),
    req("TMPFS", BuiltIn, Guest, "/init mounts a tmpfs on /tmp"),
    req("FUTEX", BuiltIn, Guest, "vmscale's threads wait on futexes"),
    req("POSIX_TIMERS", BuiltIn, Guest, "per-task CPU clocks"),
    req("FILE_LOCKING", BuiltIn, Guest, "the guest's SQLite store locks it"),
    req("VM_EVENT_COUNTERS", BuiltIn, Guest, "every run's /proc/vmstat counts"),
    req("PCI", BuiltIn, Guest, "the results disk is on virtio-pci"),
    req("VIRTIO_PCI", Enabled, Guest, "the results disk's transport"),
    req("VIRTIO_BLK", Enabled, Guest, "the results disk"),
    req("SERIAL_8250", BuiltIn, Guest, "the console (ttyS0) the host follows"),
    req("SERIAL_8250_CONSOLE", BuiltIn, Guest, "console=ttyS0"),
    req("PRINTK", BuiltIn, Guest, "panics and boot lines on the console"),
    req("SMP", BuiltIn, Cpus, "more than one vCPU"),
    req("ACPI", BuiltIn, Nodes, "QEMU describes its nodes in ACPI"),
    req("NUMA", BuiltIn, Nodes, "more than one node"),
    req("ACPI_NUMA", BuiltIn, Nodes, "QEMU's nodes come in ACPI's SRAT"),
    req("NUMA_BALANCING", BuiltIn, Only("numa01, numa02"), "hint faults"),
    req("MIGRATION", BuiltIn, Only("numa, thp, vms migrate"), "moves pages"),
    req("TRANSPARENT_HUGEPAGE", BuiltIn, Only("thp, --thp"), "THP faults"),
    req("COMPACTION", BuiltIn, Only("thp"), "thpscale's compaction"),
    req("HUGETLBFS", BuiltIn, Only("--hugetlb, vms"), "hugetlb pages"),
    req("SHMEM", BuiltIn, Only("memfd and shared regions"), "shmem"),
    req("SYSVIPC", BuiltIn, Only("vms shm"), "shmget"),
    req("MEMCG", BuiltIn, Only("vms memcg"), "memory.max"),
    req("CGROUPS", BuiltIn, Only("vms memcg"), "cgroup v2"),
    req("SWAP", BuiltIn, Only("vms swap"), "swapping"),
    req("ZRAM", Enabled, Only("vms swap"), "a swap device"),
    req("BLK_DEV_LOOP", Enabled, Only("vms"), "the loop-mounted image"),
    req("KSM", BuiltIn, Only("vms ksm"), "page merging"),
    req("PROC_PAGE_MONITOR", BuiltIn, Only("colour"), "/proc/PID/pagemap"),
    req("PERF_EVENTS", BuiltIn, Only("--profile, --locks"), "perf events"),
    req("TRACEPOINTS", BuiltIn, Only("--locks"), "lock tracepoints"),
    req("DEBUG_FS", BuiltIn, Only("--setup"), "NUMA scanner knobs"),
    req("PVH", BuiltIn, Only("a boot past the decompressor"), "guest/pvh.rs"),
];

/// The fragment a tree build merges into its base config: every option
/// of `REQUIRED` as `CONFIG_NAME=y` (a module is not enough for
/// `BuiltIn` options, and built in serves the others too). Some are
/// selected by other options rather than set (`SHMEM`, `TRACEPOINTS`):
/// check the config `make olddefconfig` made with `check`.
pub fn fragment() -> String {
    let mut out = String::from("# vmscale's guest needs (src/guest/kconfig.rs)\n");
    for r in REQUIRED {
        out.push_str(&format!("CONFIG_{}=y\n", r.name));
    }
    out
}

/// A kernel's configuration: option (without `CONFIG_`) to value; options
/// not set are absent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config(BTreeMap<String, String>);

impl Config {
    /// Parses `.config` text (`CONFIG_X=y`, `# CONFIG_X is not set`).
    pub fn parse(text: &str) -> Config {
        let map = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("CONFIG_")?.split_once('='))
            .filter(|(k, _)| !k.is_empty())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config(map)
    }

    /// The option's value (`y`, `m`, a number or a quoted string).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Number of options set.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the option has what `want` asks.
    pub fn has(&self, name: &str, want: Want) -> bool {
        matches!(
            (self.get(name), want),
            (Some("y"), _) | (Some("m"), Want::Enabled)
        )
    }
}

/// What a guest of this shape asks of the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub cpus: usize,
    pub nodes: usize,
}

/// The options a config lacks: `missing` stop the guest before it boots,
/// `only_some` are needed only by some workloads (a warning).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Check {
    pub missing: Vec<Requirement>,
    pub only_some: Vec<Requirement>,
}

impl Check {
    pub fn is_clean(&self) -> bool {
        self.missing.is_empty() && self.only_some.is_empty()
    }
}

/// Checks `config` against `REQUIRED` for a guest of `shape`.
pub fn check(config: &Config, shape: Shape) -> Check {
    let mut out = Check::default();
    for r in REQUIRED.iter().filter(|r| !config.has(r.name, r.want)) {
        match r.need {
            Need::Guest => out.missing.push(*r),
            Need::Cpus if shape.cpus > 1 => out.missing.push(*r),
            Need::Nodes if shape.nodes > 1 => out.missing.push(*r),
            Need::Workloads(_) => out.only_some.push(*r),
            Need::Cpus | Need::Nodes => {}
        }
    }
    out
}

/// One line per option: `CONFIG_X (=y, why)`.
pub fn describe(reqs: &[Requirement]) -> String {
    reqs.iter()
        .map(|r| {
            let want = match r.want {
                Want::BuiltIn => "=y",
                Want::Enabled => "=y or =m",
            };
            match r.need {
                Need::Workloads(who) => format!("CONFIG_{}{want} ({}: {})", r.name, who, r.why),
                _ => format!("CONFIG_{}{want} ({})", r.name, r.why),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The option a guest error points at: an errno from a syscall that a
/// kernel config leaves out, and the option it needs.
pub fn option_for_errno(errno: i32) -> Option<&'static str> {
    match errno {
        libc::ENOLCK => Some("FILE_LOCKING"),
        _ => None,
    }
}

/// The same, read from the stderr of a plan step that failed in a guest:
/// "No locks available" is ENOLCK's message. SQLite reports a lock that
/// fails as "database is locked", which in a guest (one process at a
/// time on a store of its own) means locks do not work at all.
pub fn option_for_guest_error(text: &str) -> Option<&'static str> {
    let lower = text.to_ascii_lowercase();
    if lower.contains("no locks available")
        || lower.contains("enolck")
        || lower.contains("database is locked")
    {
        return option_for_errno(libc::ENOLCK);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> String {
        REQUIRED
            .iter()
            .map(|r| format!("CONFIG_{}=y\n", r.name))
            .collect()
    }

    #[test]
    fn a_config_parses_set_modules_and_unset_options() {
        let c = Config::parse(
            "# comment\nCONFIG_SMP=y\nCONFIG_VIRTIO_BLK=m\n# CONFIG_NUMA is not set\n\
             CONFIG_NR_CPUS=64\nCONFIG_LOCALVERSION=\"-x\"\nCONFIG_=y\nnoise\n",
        );
        assert_eq!(c.len(), 4);
        assert_eq!(c.get("NR_CPUS"), Some("64"));
        assert!(c.has("SMP", Want::BuiltIn));
        assert!(c.has("VIRTIO_BLK", Want::Enabled));
        assert!(!c.has("VIRTIO_BLK", Want::BuiltIn));
        assert!(!c.has("NUMA", Want::Enabled));
    }

    #[test]
    fn missing_options_are_sorted_by_who_needs_them() {
        let one = Shape { cpus: 1, nodes: 1 };
        let many = Shape { cpus: 4, nodes: 2 };
        assert!(check(&Config::parse(&full()), many).is_clean());
        let c = Config::parse(
            &full()
                .replace("CONFIG_FILE_LOCKING=y", "# CONFIG_FILE_LOCKING is not set")
                .replace("CONFIG_SMP=y", "")
                .replace("CONFIG_NUMA=y", "")
                .replace("CONFIG_VIRTIO_BLK=y", "CONFIG_VIRTIO_BLK=m")
                .replace("CONFIG_TRANSPARENT_HUGEPAGE=y", ""),
        );
        let names = |v: &[Requirement]| v.iter().map(|r| r.name).collect::<Vec<_>>();
        // One vCPU, one node: SMP and NUMA are not needed; a module is enough
        // for the disk.
        let k = check(&c, one);
        assert_eq!(names(&k.missing), ["FILE_LOCKING"]);
        assert_eq!(names(&k.only_some), ["TRANSPARENT_HUGEPAGE"]);
        let k = check(&c, many);
        assert_eq!(names(&k.missing), ["FILE_LOCKING", "SMP", "NUMA"]);
        let d = describe(&k.missing);
        assert!(
            d.starts_with("CONFIG_FILE_LOCKING=y (the guest's SQLite"),
            "{d}"
        );
        assert!(describe(&k.only_some).contains("(thp, --thp: "), "{d}");
    }

    #[test]
    fn the_fragment_sets_every_option_once() {
        let f = fragment();
        let c = Config::parse(&f);
        assert_eq!(c.len(), REQUIRED.len(), "an option listed twice");
        assert!(check(&c, Shape { cpus: 8, nodes: 4 }).is_clean());
        assert!(f.lines().all(|l| l.starts_with('#') || l.ends_with("=y")));
    }

    #[test]
    fn a_locking_error_names_its_option() {
        assert_eq!(option_for_errno(libc::ENOLCK), Some("FILE_LOCKING"));
        assert_eq!(option_for_errno(libc::ENOENT), None);
        let msg = "Error: No locks available (os error 37)";
        assert_eq!(option_for_guest_error(msg), Some("FILE_LOCKING"));
        let msg = "/out/guest.db is not a vmscale store (database is locked)";
        assert_eq!(option_for_guest_error(msg), Some("FILE_LOCKING"));
        assert_eq!(option_for_guest_error("no such table: runs"), None);
    }
}
