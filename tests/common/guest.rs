//! What the guest tests share: whether QEMU and busybox are there (under
//! CI=true their absence fails the test, never skips it), the Debian
//! kernels fetched by the project's own script, and running `vmscale
//! guest` (a command line put together by [`GuestRun`]) and reading what
//! each boot left (its file names are vmscale's own, `guest::files`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Why a guest cannot boot here, if it cannot.
pub fn missing() -> Option<String> {
    let qemu = Command::new("qemu-system-x86_64").arg("--version").output();
    if !qemu.is_ok_and(|o| o.status.success()) {
        return Some("no qemu-system-x86_64 (apt-get install qemu-system-x86)".into());
    }
    if !Path::new("/bin/busybox").is_file() {
        return Some("no /bin/busybox (apt-get install busybox-static)".into());
    }
    let apt = Command::new("apt-get").arg("--version").output();
    if !apt.is_ok_and(|o| o.status.success()) {
        return Some("no apt-get to download the Debian kernels".into());
    }
    None
}

/// True when the test should go on; false after saying why it skips.
/// Under CI=true a missing component fails the test.
pub fn available(test: &str) -> bool {
    go_on(test, missing())
}

/// True when nothing is missing; else says why the test skips, or under
/// CI=true fails it.
pub fn go_on(test: &str, missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    if super::under_ci() {
        panic!("CI=true and {test} cannot boot a guest: {why}");
    }
    eprintln!("SKIPPED {test}: {why} (under CI=true this fails)");
    false
}

/// Two different real Debian kernels: linux-image-amd64's and
/// linux-image-cloud-amd64's, downloaded once by bench/guest-kernels.sh.
pub fn kernels() -> &'static [PathBuf] {
    static KERNELS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    KERNELS.get_or_init(|| fetch(&["linux-image-amd64", "linux-image-cloud-amd64"]))
}

/// Debian's 6.12 cloud kernel (linux-image-6.12-cloud-amd64, from
/// bookworm-backports): per-size THP with its stats/ counters.
pub fn kernel_6_12() -> &'static Path {
    static KERNEL: OnceLock<Vec<PathBuf>> = OnceLock::new();
    &KERNEL.get_or_init(|| fetch(&["linux-image-6.12-cloud-amd64"]))[0]
}

/// Debian's generic 6.12 kernel (linux-image-6.12-amd64, from
/// bookworm-backports): the cloud one has no zswap, this one has.
pub fn kernel_6_12_generic() -> &'static Path {
    static KERNEL: OnceLock<Vec<PathBuf>> = OnceLock::new();
    &KERNEL.get_or_init(|| fetch(&["linux-image-6.12-amd64"]))[0]
}

/// The .deb of each Debian meta package, by bench/guest-kernels.sh.
fn fetch(metas: &[&str]) -> Vec<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/guest-kernels.sh");
    let out = Command::new("bash")
        .arg(script)
        .args(metas)
        .output()
        .expect("run bench/guest-kernels.sh");
    assert!(
        out.status.success(),
        "bench/guest-kernels.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let paths: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    assert_eq!(paths.len(), metas.len(), "{paths:?}");
    paths
}

/// `vmscale --db DB guest ARGS`, not yet started.
pub fn command(db: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vmscale"));
    c.arg("--db").arg(db).arg("guest").args(args);
    c
}

/// `vmscale --db DB guest ARGS`.
pub fn guest(db: &Path, args: &[&str]) -> Output {
    command(db, args).output().expect("run vmscale guest")
}

/// A `vmscale guest` command line: options in the order given, then the
/// plan's steps after `--`, separated by `---`.
#[derive(Debug, Clone, Default)]
pub struct GuestRun {
    options: Vec<String>,
    steps: Vec<Vec<String>>,
}

impl GuestRun {
    /// One kernel, emulated (TCG), with `mem` of memory.
    pub fn tcg(kernel: &Path, mem: &str) -> GuestRun {
        GuestRun::default()
            .kernel(kernel)
            .opt("--accel", "tcg")
            .opt("--mem", mem)
    }

    pub fn kernel(self, kernel: &Path) -> GuestRun {
        self.opt("--kernel", s(kernel))
    }

    /// `--NAME VALUE`.
    pub fn opt(mut self, name: &str, value: &str) -> GuestRun {
        self.options.extend([name.to_string(), value.to_string()]);
        self
    }

    /// `--NAME` alone.
    pub fn flag(mut self, name: &str) -> GuestRun {
        self.options.push(name.to_string());
        self
    }

    /// Keep the boots' files in `dir` (`--out`).
    pub fn out(self, dir: &Path) -> GuestRun {
        self.opt("--out", s(dir))
    }

    /// The next plan step: a vmscale command line.
    pub fn step(mut self, words: &[&str]) -> GuestRun {
        self.steps
            .push(words.iter().map(|w| w.to_string()).collect());
        self
    }

    pub fn args(&self) -> Vec<String> {
        let mut a = self.options.clone();
        for (i, step) in self.steps.iter().enumerate() {
            a.push(if i == 0 { "--" } else { "---" }.to_string());
            a.extend(step.iter().cloned());
        }
        a
    }

    /// The command against the store `db`, not yet started.
    pub fn command(&self, db: &Path) -> Command {
        let args = self.args();
        command(db, &args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Runs it to the end against the store `db`.
    pub fn run(&self, db: &Path) -> Output {
        self.command(db).output().expect("run vmscale guest")
    }
}

/// Where `--out DIR` keeps what the guest of `kernel` (1-based) brought
/// back in `round`.
pub fn results(out: &Path, round: u32, kernel: u32) -> PathBuf {
    out.join(format!("round-{round}/kernel-{kernel}"))
        .join(vmscale::guest::files::RESULTS)
}

/// Plan step `k`'s standard output in `results`.
pub fn step_out(results: &Path, k: usize) -> String {
    read(&results.join(vmscale::guest::files::step_out(k)))
}

/// A file the guest wrote, as text.
pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A path as a &str for argument lists.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}
