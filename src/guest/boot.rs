//! One boot put together: the kernel's initramfs, its command line with
//! the guest's record (`vmscale.*` parameters the snapshot reads back),
//! QEMU started and watched, and the results disk read back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::console::{self, Outcome, Watch};
use super::files;
use super::init::Marker;
use super::initramfs::{self, Scripts, Userland};
use super::kernel::Kernel;
use super::modules;
use super::qemu::{self, Accel, Machine};
use super::topology::Topology;
use super::transport::{self, Bus, Results};
use crate::error::Result;
use crate::machine::guest::GuestInfo;

/// What every boot of one `vmscale guest` shares.
pub struct Session<'a> {
    pub topology: &'a Topology,
    pub accel: Accel,
    pub cpu: Option<&'a str>,
    /// `--append`, after vmscale's own parameters.
    pub append: &'a str,
    /// The record each boot carries; `label` and `round` set per boot.
    pub info: GuestInfo,
    pub bound: Duration,
    /// How long the kernel may take to reach init (None: only `bound`).
    pub to_init: Option<Duration>,
    /// How long the console of a guest with a heartbeat (TCG) may stay
    /// silent after init.
    pub silence: Option<Duration>,
}

/// A kernel with its initramfs, ready to boot.
pub struct Prepared {
    pub kernel: Kernel,
    pub label: String,
    pub initrd: PathBuf,
    /// The results disk's bus.
    pub bus: Bus,
    /// This kernel's own command-line additions (`--append-to`).
    pub append: String,
    /// The kernel's ELF image QEMU enters at its PVH entry, where it has
    /// one (`pvh`); else the bzImage boots.
    pub pvh: Option<PathBuf>,
}

/// Resolves the modules `kernel` needs (the set-up room's where `user`
/// has the room, and, for a plan that boots guests, its KVM modules) and
/// writes its initramfs into `work` as `initrd-INDEX`.
pub fn prepare(
    kernel: Kernel,
    label: String,
    index: usize,
    user: &Userland,
    scripts: &Scripts,
    work: &Path,
) -> Result<Prepared> {
    let bus = modules::results_bus(kernel.modules.as_deref());
    let mut mods = modules::resolve_with(
        kernel.modules.as_deref(),
        &kernel.release,
        bus.modules(),
        if user.room { modules::ROOM } else { &[] },
    )?;
    if scripts.nested.is_some() {
        for m in modules::kvm(kernel.modules.as_deref(), &kernel.release)? {
            if !mods.iter().any(|x| x.name == m.name) {
                mods.push(m);
            }
        }
    }
    let initrd = work.join(format!("initrd-{index}"));
    initramfs::write(&initrd, user, &mods, bus, scripts)?;
    Ok(Prepared {
        kernel,
        label,
        initrd,
        bus,
        append: String::new(),
        pvh: None,
    })
}

/// Gives each prepared kernel its ELF image for QEMU to enter at its PVH
/// entry, where it has one (`--entry`: by default for emulated guests).
pub fn enter_at_pvh(prepared: &mut [Prepared]) -> Result<()> {
    for p in prepared {
        p.pvh = super::pvh::image(&p.kernel.image, &p.kernel.sha256)?
            .map_err(|why| eprintln!("vmscale guest: {} boots as a bzImage: {why}", p.label))
            .ok();
    }
    Ok(())
}

/// The guest kernel's command line.
pub fn cmdline(info: &GuestInfo, append: &str) -> String {
    // no_timer_check: under TCG on a loaded host the IO-APIC timer check
    // can fail and panic the boot ("IO-APIC + timer doesn't work!").
    // cryptomgr.notests: the crypto algorithms' self-tests (none of the
    // paths vmscale measures) cost a TCG boot some 0.2 s (docs/bisect.md);
    // `--append cryptomgr.notests=0` runs them, and fips=1 runs them anyway.
    let mut c = String::from("console=ttyS0 quiet panic=-1 no_timer_check cryptomgr.notests");
    for p in info.to_params() {
        c.push(' ');
        c.push_str(&p);
    }
    if !append.trim().is_empty() {
        c.push(' ');
        c.push_str(append.trim());
    }
    c
}

/// What one boot gave.
pub struct Booted {
    pub outcome: Outcome,
    pub results: Option<Results>,
    /// Where its console log, QEMU's stderr and results are.
    pub dir: PathBuf,
}

/// Boots `p` for `round` with its files in `dir`; `reboot_cause`: why the
/// round's first boot was lost, for its second.
pub fn boot(
    s: &Session,
    p: &Prepared,
    (round, reboot_cause): (u32, Option<&str>),
    dir: &Path,
    on_marker: &mut dyn FnMut(&Marker),
) -> Result<Booted> {
    std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io("cannot create", dir, e))?;
    let mut info = s.info.clone();
    info.label = Some(p.label.clone());
    info.round = Some(round);
    info.rebooted = reboot_cause.is_some();
    info.reboot_cause = reboot_cause.map(str::to_string);
    info.kernel = Some(p.kernel.identity());
    info.revision = p.kernel.revision.clone();
    info.pvh = p.pvh.is_some();
    let append = cmdline(&info, &format!("{} {}", s.append, p.append));
    let disk = dir.join(files::RESULTS_DISK);
    transport::create_disk(&disk)?;
    let kvm = s.accel == Accel::Kvm;
    // The QMP socket in a short private directory: a unix socket's path
    // must be under 108 bytes, and QEMU exits at once on a longer one
    // (an --out a little deep).
    let sock_dir = if kvm {
        Some(crate::workdir::WorkDir::new("vmscale-qmp")?)
    } else {
        None
    };
    let qmp = sock_dir.as_ref().map_or(dir, |d| d.path()).join(files::QMP);
    let m = Machine {
        accel: s.accel,
        cpu: s.cpu,
        topology: s.topology,
        kernel: p.pvh.as_deref().unwrap_or(&p.kernel.image),
        initrd: &p.initrd,
        append: &append,
        disk: Some((&disk, p.bus)),
        qmp: kvm.then_some(qmp.as_path()),
    };
    let cmd = qemu::command(&m, &dir.join(files::QEMU_STDERR))?;
    let pinned = info.pinned.clone();
    let outcome = console::supervise(
        cmd,
        Watch {
            bound: s.bound,
            to_init: s.to_init,
            silence: s.silence,
            log: &dir.join(files::CONSOLE_LOG),
            // Once the results are written and synced (each write done is
            // in the image file: QEMU has written it to the host), QEMU is
            // stopped: the guest kernel's power-off, its devices shut down
            // one by one under emulation, is not waited for.
            stop_at: Some(Marker::Written),
            on_marker,
            on_hang: &mut || {
                if kvm {
                    keep_registers(&qmp, &dir.join(files::QEMU_REGISTERS));
                }
            },
        },
        || {
            if kvm {
                qemu::pin_and_start(&qmp, &pinned, s.topology.shape.mem_mib)
            } else {
                Ok(())
            }
        },
    );
    let _ = std::fs::remove_file(&qmp);
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            let _ = std::fs::remove_file(&disk);
            return Err(e);
        }
    };
    let results = transport::read_disk(&disk, &dir.join(files::RESULTS));
    let _ = std::fs::remove_file(&disk);
    Ok(Booted {
        outcome,
        results: results?,
        dir: dir.to_path_buf(),
    })
}

/// Writes a hung KVM guest's registers beside its console log; what
/// cannot be asked is written there instead (the failure still stands).
fn keep_registers(qmp: &Path, to: &Path) {
    let text = qemu::registers(qmp).unwrap_or_else(|e| format!("not read: {e}\n"));
    if let Err(e) = std::fs::write(to, text) {
        eprintln!("vmscale guest: cannot write {}: {e}", to.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_carries_the_record_and_the_append_last() {
        let info = GuestInfo {
            accel: "tcg".into(),
            label: Some("a b".into()),
            round: Some(2),
            ..GuestInfo::default()
        };
        let c = cmdline(&info, " rdinit=/nonexistent ");
        assert!(
            c.starts_with(
                "console=ttyS0 quiet panic=-1 no_timer_check cryptomgr.notests vmscale.accel=tcg"
            ),
            "{c}"
        );
        assert!(
            c.contains("vmscale.label=a%20b") && c.contains("vmscale.round=2"),
            "{c}"
        );
        assert!(c.ends_with(" rdinit=/nonexistent"), "{c}");
        assert_eq!(GuestInfo::from_cmdline(&c), Some(info));
    }
}
