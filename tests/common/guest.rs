//! What the guest tests share: whether QEMU and busybox are there (under
//! CI=true their absence fails the test, never skips it), the Debian
//! kernels fetched by the project's own script, and running `vmscale
//! guest`.

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
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true and {test} cannot boot a guest: {why}");
    }
    eprintln!("SKIPPED {test}: {why} (under CI=true this fails)");
    false
}

/// Two different real Debian kernels: linux-image-amd64's and
/// linux-image-cloud-amd64's, downloaded once by bench/guest-kernels.sh.
pub fn kernels() -> &'static [PathBuf] {
    static KERNELS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    KERNELS.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/guest-kernels.sh");
        let out = Command::new("bash")
            .arg(script)
            .args(["linux-image-amd64", "linux-image-cloud-amd64"])
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
        assert_eq!(paths.len(), 2, "{paths:?}");
        paths
    })
}

/// `vmscale --db DB guest ARGS`.
pub fn guest(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .arg("--db")
        .arg(db)
        .arg("guest")
        .args(args)
        .output()
        .expect("run vmscale guest")
}

/// A file the guest wrote, as text.
pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A path as a &str for argument lists.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}
