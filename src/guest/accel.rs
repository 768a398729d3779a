//! KVM or TCG. KVM is used where it boots the kernel: /dev/kvm must open,
//! the KVM module must be an ordinary one (kvm-pvm, a nested kind, boots
//! only kernels built for it), and a probe boot must reach init within a
//! bound (a guest that prints nothing by then is a failed probe, so the
//! probe cannot hang). Otherwise TCG, which emulates the CPU; asked for,
//! TCG whose clock is the instruction count (icount).

use std::path::Path;
use std::time::Duration;

use super::console::{self, End, Watch};
use super::init::{self, Marker};
use super::initramfs::{self, Scripts, Userland};
use super::qemu::{self, Accel, Machine};
use super::topology::{Request, Topology};
use crate::error::{Error, Result};

/// The longest a probe boot may take to reach init under KVM on hardware
/// (times [`qemu::kvm_pace`] here).
pub const PROBE_BOUND: Duration = Duration::from_secs(30);

/// The accelerator asked for (`--accel`): `auto` is KVM where a probe boot
/// shows it works, else TCG; `kvm` is KVM or a refusal saying why not;
/// `tcg` emulates the CPU; `icount` emulates it with the instruction count
/// as the guest's clock. (No doc comments on the values: `--help` would
/// take its long layout.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Asked {
    Auto,
    Kvm,
    Tcg,
    Icount,
}

/// The accelerator chosen and why.
#[derive(Debug, Clone)]
pub struct Choice {
    pub accel: Accel,
    /// Why not KVM (for the TCG banner); empty under KVM.
    pub why: String,
}

/// Why KVM cannot be used here without booting anything, if it cannot.
pub fn kvm_unusable(sys: &Path, dev: &Path) -> Option<String> {
    if sys.join("module/kvm_pvm").exists() {
        return Some(
            "/dev/kvm is kvm-pvm (nested, pagetable-based), which boots only guest \
             kernels built for PVM"
                .into(),
        );
    }
    if let Err(e) = std::fs::OpenOptions::new().read(true).write(true).open(dev) {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            " (no KVM module loaded, or a CPU without svm/vmx: a guest that boots \
             guests needs a CPU model with them, e.g. --cpu max under TCG)"
        } else {
            ""
        };
        return Some(format!("{} cannot be opened: {e}{hint}", dev.display()));
    }
    None
}

/// What a probe boot's end says: `None` if KVM works.
pub fn probe_verdict(end: &End, spoke: bool) -> Option<String> {
    match end {
        End::Stopped => None,
        End::TimedOut(d) if !spoke => Some(format!(
            "a KVM probe boot printed nothing in {} s",
            d.as_secs()
        )),
        End::TimedOut(d) | End::NoInit(d) => Some(format!(
            "a KVM probe boot did not reach init in {} s",
            d.as_secs()
        )),
        End::Panicked => Some("the kernel panicked in a KVM probe boot".into()),
        End::Wedged(why) => Some(format!("a KVM probe boot stopped as wedged: {why}")),
        End::Exited(code) => Some(format!(
            "QEMU exited ({}) in a KVM probe boot before init",
            code.map_or("by a signal".into(), |c| format!("status {c}"))
        )),
        End::Interrupted(_) => Some("interrupted".into()),
    }
}

/// Boots `kernel` under KVM with the probe's initramfs, bounded.
pub fn probe(
    kernel: &Path,
    initrd: &Path,
    topology: &Topology,
    work: &Path,
) -> Result<Option<String>> {
    let m = Machine {
        accel: Accel::Kvm,
        cpu: None,
        topology,
        kernel,
        initrd,
        append: "console=ttyS0 quiet panic=-1",
        disk: None,
        qmp: None,
    };
    let cmd = qemu::command(&m, &work.join("probe.stderr"))?;
    let mut ignore = |_: &Marker| {};
    let out = console::supervise(
        cmd,
        Watch {
            bound: PROBE_BOUND * qemu::kvm_pace(),
            to_init: None,
            silence: None,
            log: &work.join("probe.console"),
            stop_at: Some(Marker::ProbeOk),
            on_marker: &mut ignore,
            on_hang: &mut || {},
        },
        || Ok(()),
    )?;
    if let End::Interrupted(_) = out.end {
        return Err(Error::Interrupted);
    }
    Ok(probe_verdict(&out.end, out.spoke))
}

/// The probe boot of `kernel`: writes the probe's initramfs (an /init that
/// says it is up and powers off) into `work` and boots it on one vCPU.
pub fn probe_boot(kernel: &Path, user: &Userland, work: &Path) -> Result<Option<String>> {
    let probe_s = init::probe_script();
    let scripts = Scripts {
        init: &probe_s,
        plan: "",
        setup: "",
        nested: None,
    };
    let initrd = work.join("initrd-probe");
    initramfs::write(&initrd, user, &[], super::transport::Bus::Virtio, &scripts)?;
    let one = Request {
        cpus: Some(1),
        nodes: 1,
        sockets: 1,
        dies: 1,
        threads: 1,
        memory_only_nodes: 0,
        mem_mib: 512,
        distances: Vec::new(),
    }
    .check()?;
    probe(kernel, &initrd, &one, work)
}

/// Refuses icount with more than one vCPU: under QEMU 7.2's `-icount` a
/// 2-vCPU guest stopped at "Booting SMP configuration" here (100 s, and
/// 270 s without init).
pub fn check_shape(asked: Asked, cpus: usize) -> Result<()> {
    if asked == Asked::Icount && cpus > 1 {
        return Err(Error::Input(format!(
            "--accel icount with {cpus} vCPUs: under QEMU's -icount the guest's second CPU \
             never came up here; give --cpus 1, or --accel tcg for several vCPUs"
        )));
    }
    Ok(())
}

/// Decides the accelerator for `asked`; `boot` runs the probe boot when
/// one is needed.
pub fn choose(
    asked: Asked,
    sys: &Path,
    dev: &Path,
    boot: impl FnOnce() -> Result<Option<String>>,
) -> Result<Choice> {
    let tcg = |why: String| {
        Ok(Choice {
            accel: Accel::Tcg,
            why,
        })
    };
    match asked {
        Asked::Tcg => return tcg("--accel tcg".into()),
        Asked::Icount => {
            return Ok(Choice {
                accel: Accel::Icount,
                why: "--accel icount".into(),
            });
        }
        Asked::Auto | Asked::Kvm => {}
    }
    let why = match kvm_unusable(sys, dev) {
        Some(why) => Some(why),
        None => boot()?,
    };
    match (why, asked) {
        (None, _) => Ok(Choice {
            accel: Accel::Kvm,
            why: String::new(),
        }),
        (Some(why), Asked::Kvm) => Err(Error::Refused(format!(
            "--accel kvm: {why}; use --accel tcg (or auto) to emulate the CPU"
        ))),
        (Some(why), _) => tcg(why),
    }
}

/// The banner printed once when the CPU is emulated; none under KVM.
pub fn banner(choice: &Choice) -> Option<String> {
    let why = &choice.why;
    let clock = match choice.accel {
        Accel::Kvm => return None,
        Accel::Tcg => String::new(),
        Accel::Icount => format!(
            "  Its clock is the instruction count ({} ns an instruction, idle time\n  \
             skipped): a \"second\" is a number of instructions, not host time.\n",
            1u32 << super::qemu::ICOUNT_SHIFT
        ),
    };
    Some(format!(
        "vmscale guest: TCG: the guest's CPU is emulated ({why}).\n{clock}  \
         The comparison is of the kernels' code paths, not of hardware speed:\n  \
         read ratios between kernels, not absolute figures.\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kvm_pvm_and_an_unopenable_device_fall_back_without_booting() {
        let dir = crate::scratch::at("");
        std::fs::create_dir_all(dir.join("module/kvm_pvm")).unwrap();
        let nodev = dir.join("kvm");
        let c = choose(Asked::Auto, &dir, &nodev, || panic!("no probe boot")).unwrap();
        assert_eq!(c.accel, Accel::Tcg);
        assert!(c.why.contains("kvm-pvm"), "{}", c.why);
        let e = choose(Asked::Kvm, &dir, &nodev, || panic!("no probe boot")).unwrap_err();
        assert!(matches!(e, Error::Refused(_)), "{e}");
        std::fs::remove_dir_all(dir.join("module")).unwrap();
        let c = choose(Asked::Auto, &dir, &nodev, || panic!("no probe boot")).unwrap();
        assert!(c.why.contains("cannot be opened"), "{}", c.why);
        // A device that opens: the probe decides.
        std::fs::write(&nodev, b"").unwrap();
        let c = choose(Asked::Auto, &dir, &nodev, || Ok(None)).unwrap();
        assert_eq!(c.accel, Accel::Kvm);
        let c = choose(Asked::Auto, &dir, &nodev, || {
            Ok(probe_verdict(&End::TimedOut(PROBE_BOUND), false))
        })
        .unwrap();
        assert_eq!(c.accel, Accel::Tcg);
        assert!(c.why.contains("printed nothing in 30 s"), "{}", c.why);
        assert_eq!(
            choose(Asked::Tcg, &dir, &nodev, || panic!()).unwrap().accel,
            Accel::Tcg
        );
        let c = choose(Asked::Icount, &dir, &nodev, || panic!()).unwrap();
        assert_eq!(c.accel, Accel::Icount);
        assert!(banner(&c).unwrap().contains("instruction count"));
    }
}
