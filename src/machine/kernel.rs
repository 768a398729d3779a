//! Kernel facts: release, command line, the VM sysctls that change results,
//! and whether we run under a hypervisor.

use super::{read_trimmed, under};
use std::collections::BTreeMap;
use std::path::Path;

/// Sysctls recorded in every snapshot, as dotted names.
pub const SYSCTLS: &[&str] = &[
    "kernel.numa_balancing",
    "vm.percpu_pagelist_high_fraction",
    "vm.overcommit_memory",
    "vm.zone_reclaim_mode",
    "vm.max_map_count",
];

/// The kernel release (`uname -r`).
pub fn release(root: &Path) -> Option<String> {
    read_trimmed(root, "/proc/sys/kernel/osrelease").filter(|s| !s.is_empty())
}

/// The kernel command line.
pub fn cmdline(root: &Path) -> Option<String> {
    read_trimmed(root, "/proc/cmdline")
}

/// Every name of [`SYSCTLS`] with its value, `None` where unreadable.
pub fn sysctls(root: &Path) -> BTreeMap<String, Option<String>> {
    SYSCTLS
        .iter()
        .map(|name| {
            let path = format!("/proc/sys/{}", name.replace('.', "/"));
            (name.to_string(), read_trimmed(root, &path))
        })
        .collect()
}

/// What the machine says about virtualisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hypervisor {
    /// The hypervisor's name or vendor, or "present" if only its presence
    /// is known.
    pub name: Option<String>,
    /// `Some(false)`: the CPU flags say bare metal; `None`: nothing says.
    pub present: Option<bool>,
}

/// Reads /sys/hypervisor/type, the `hypervisor` CPU flag and the DMI vendor.
pub fn hypervisor(root: &Path) -> Hypervisor {
    let cpuinfo = std::fs::read_to_string(under(root, "/proc/cpuinfo")).ok();
    detect_hypervisor(
        read_trimmed(root, "/sys/hypervisor/type"),
        cpuinfo.as_deref(),
        read_trimmed(root, "/sys/class/dmi/id/sys_vendor"),
    )
}

/// The decision behind [`hypervisor`], on the files' contents.
fn detect_hypervisor(
    hyp_type: Option<String>,
    cpuinfo: Option<&str>,
    dmi_vendor: Option<String>,
) -> Hypervisor {
    if let Some(name) = hyp_type.filter(|t| !t.is_empty()) {
        return Hypervisor {
            name: Some(name),
            present: Some(true),
        };
    }
    // x86 lists CPU flags on "flags" lines; other architectures do not.
    let flags = cpuinfo.and_then(|text| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "flags").then_some(v)
        })
    });
    match flags {
        Some(flags) if flags.split_whitespace().any(|f| f == "hypervisor") => Hypervisor {
            name: Some(
                dmi_vendor
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| "present".into()),
            ),
            present: Some(true),
        },
        Some(_) => Hypervisor {
            name: None,
            present: Some(false),
        },
        None => Hypervisor {
            name: None,
            present: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUEST: &str = "processor\t: 0\nflags\t\t: fpu sse2 hypervisor lahf_lm\n";
    const METAL: &str = "processor\t: 0\nflags\t\t: fpu sse2 lahf_lm\n";

    #[test]
    fn hypervisor_type_file_wins() {
        let h = detect_hypervisor(Some("xen".into()), Some(METAL), None);
        assert_eq!(h.name.as_deref(), Some("xen"));
        assert_eq!(h.present, Some(true));
    }

    #[test]
    fn cpu_flag_with_and_without_vendor() {
        let h = detect_hypervisor(None, Some(GUEST), Some("QEMU".into()));
        assert_eq!((h.name.as_deref(), h.present), (Some("QEMU"), Some(true)));
        let h = detect_hypervisor(Some(String::new()), Some(GUEST), None);
        assert_eq!(
            (h.name.as_deref(), h.present),
            (Some("present"), Some(true))
        );
    }

    #[test]
    fn bare_metal_differs_from_unknown() {
        let h = detect_hypervisor(None, Some(METAL), Some("Dell Inc.".into()));
        assert_eq!((h.name, h.present), (None, Some(false)));
        let h = detect_hypervisor(None, None, Some("QEMU".into()));
        assert_eq!((h.name, h.present), (None, None));
        let arm = "processor\t: 0\nFeatures\t: fp asimd\n";
        assert_eq!(detect_hypervisor(None, Some(arm), None).present, None);
    }
}
