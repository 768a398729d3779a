//! Kernel against kernel: each kernel boots in a throw-away QEMU guest
//! whose root is an initramfs vmscale builds (busybox, this binary, the
//! kernel's virtio modules); the plan runs inside against a guest store
//! that comes back on a raw disk and is pooled per kernel over rounds.
//! One file per concern, as virtme splits them: the kernel image and its
//! package (`kernel`, `deb`), its ELF image for a direct boot (`pvh`),
//! its config checked against what it must be
//! built with (`kernel_config`, against `crate::kconfig`), its modules
//! (`modules`), the vmscale binary it runs (`binary`), the root file
//! system (`initramfs`, `init`), what a guest whose plan boots guests is
//! given (`nested`), the shape (`topology`), QEMU's command line and the
//! accelerator probe (`qemu`, `accel`), the console (`console`), the
//! results and their file names (`transport`, `files`, `pool`), one boot
//! put together (`boot`), the rounds of boots (`rounds`), what a boot
//! says for a deciding comparison (`decide`) and the boot options the
//! commands that boot share (`options`); their scratch directory is
//! `crate::workdir`.

pub mod accel;
pub mod binary;
pub mod boot;
pub mod console;
pub mod deb;
pub mod decide;
pub mod elf;
pub mod files;
pub mod host_load;
pub mod init;
pub mod initramfs;
pub mod kernel;
pub mod kernel_config;
pub mod modules;
pub mod nested;
pub mod options;
pub mod pool;
pub mod pvh;
pub mod qemu;
pub mod rounds;
pub mod topology;
pub mod transport;
pub mod tree;
