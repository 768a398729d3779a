//! The names of the files one boot leaves: those the guest's init writes
//! into /out (and the host reads back from the results disk), and those
//! the host keeps beside them in the boot's directory. One list, so init,
//! transport and the host cannot spell a name two ways.

/// The guest's store (`VMSCALE_DB` inside the guest).
pub const STORE: &str = "guest.db";
/// `uname -r` as the guest saw it.
pub const RELEASE: &str = "release";
/// The guest kernel's /proc/cmdline.
pub const CMDLINE: &str = "cmdline";
/// The guest's sysfs topology files, copied under their own paths.
pub const TOPOLOGY: &str = "sysfs-topology";
/// What the kernel brought up: online CPUs, nodes, MemTotal in KiB.
pub const SHAPE: &str = "shape";
/// The `--setup` lines' trace and exit status.
pub const SETUP_LOG: &str = "setup.log";
pub const SETUP_STATUS: &str = "setup.status";

/// Plan step `k`'s (1-based) standard output.
pub fn step_out(k: usize) -> String {
    format!("step-{k}.out")
}

/// Plan step `k`'s standard error.
pub fn step_err(k: usize) -> String {
    format!("step-{k}.err")
}

/// Plan step `k`'s exit status.
pub fn step_status(k: usize) -> String {
    format!("step-{k}.status")
}

/// Host side, in the boot's directory: the console as it came.
pub const CONSOLE_LOG: &str = "console.log";
/// QEMU's standard error.
pub const QEMU_STDERR: &str = "qemu.stderr";
/// QEMU's log of an emulated CPU's resets (`-d cpu_reset`).
pub const QEMU_LOG: &str = "qemu.log";
/// Every vCPU's registers at the moment a hung KVM guest was stopped
/// (`info registers -a` over QMP).
pub const QEMU_REGISTERS: &str = "qemu.registers";
/// The results disk while the guest runs.
pub const RESULTS_DISK: &str = "results.img";
/// The directory the results disk is unpacked into.
pub const RESULTS: &str = "results";
/// QEMU's monitor socket (KVM only, to pin the vCPUs), in a short
/// private directory of its own.
pub const QMP: &str = "qmp.sock";
/// In the work (or --out) directory: each kernel's rounds pooled.
pub const POOLED: &str = "pooled.db";
