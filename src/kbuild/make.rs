//! Runs the tree's make out of tree (`-C SRC O=BUILD`), `-j` by the online
//! CPUs, through ccache where it is installed, with its output in a log
//! file of the build directory: the user sees the stage and the time, and
//! on a failure the log's last lines. make leads a process group that dies
//! with vmscale (`exec::group`), so an interrupted build leaves nothing
//! running in the cache.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::exec::group::Group;

/// Lines of make's output a failure shows.
pub const TAIL: usize = 40;

/// make in one source and build directory.
pub struct Make {
    pub src: PathBuf,
    pub build: PathBuf,
    pub jobs: usize,
    /// `CC="ccache gcc"`.
    pub ccache: bool,
}

/// Whether a program is on PATH.
pub fn installed(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            std::fs::metadata(d.join(program)).is_ok_and(|m| {
                m.is_file()
                    && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
            })
        })
    })
}

/// The compiler's version line (`gcc --version`'s first), part of the
/// cache key: another compiler builds other objects.
pub fn compiler_version() -> Result<String> {
    let out = Command::new("gcc")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Error::Input(format!(
                "cannot run gcc ({e}): a kernel build needs it; install gcc, make, flex, bison, \
                 bc and libelf-dev"
            ))
        })?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("gcc")
        .to_string())
}

/// Checks the tools a kernel build needs before any is started.
pub fn check_tools() -> Result<()> {
    let missing: Vec<&str> = ["make", "gcc", "flex", "bison", "bc", "git"]
        .into_iter()
        .filter(|p| !installed(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Input(format!(
        "a kernel build needs {} (not on PATH); install them (Debian: apt-get install \
         build-essential flex bison bc libelf-dev git)",
        missing.join(", ")
    )))
}

/// How a make ended.
pub enum Ended {
    Ok,
    /// make failed: its exit status and the log's last lines.
    Failed(Option<i32>, Vec<String>),
}

impl Make {
    /// Runs make with `args`, its output into `log` (replaced); calls
    /// `tick` about every 200 ms while it runs.
    pub fn run(&self, args: &[&str], log: &Path, tick: &mut dyn FnMut()) -> Result<Ended> {
        let out = std::fs::File::create(log).map_err(|e| Error::io("cannot create", log, e))?;
        let err = out
            .try_clone()
            .map_err(|e| Error::io("cannot open", log, e))?;
        let mut c = Command::new("make");
        c.arg("-C")
            .arg(&self.src)
            .arg(format!("O={}", self.build.display()))
            .arg(format!("-j{}", self.jobs.max(1)))
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .env("KBUILD_BUILD_USER", "vmscale")
            .env("KBUILD_BUILD_HOST", "vmscale")
            .env_remove("ARCH")
            .env_remove("CROSS_COMPILE");
        if self.ccache {
            c.arg("CC=ccache gcc");
        }
        let (mut child, group) = Group::spawn(&mut c).map_err(|e| {
            Error::Input(format!(
                "cannot run make ({e}); install make (Debian: build-essential)"
            ))
        })?;
        let status = loop {
            if crate::exec::signals::caught().is_some() {
                group.signal(libc::SIGTERM);
                let _ = child.wait();
                return Err(Error::Interrupted);
            }
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) => {}
                Err(e) => return Err(Error::io("cannot wait for make in", &self.build, e)),
            }
            tick();
            std::thread::sleep(Duration::from_millis(200));
        };
        drop(group);
        if status.success() {
            return Ok(Ended::Ok);
        }
        Ok(Ended::Failed(status.code(), tail(log, TAIL)))
    }
}

/// The last `n` lines of a file.
pub fn tail(path: &Path, n: usize) -> Vec<String> {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_make_gives_its_last_lines() {
        let dir = crate::scratch::at("");
        let mut mk = String::from("all:\n");
        for i in 0..50 {
            mk.push_str(&format!("\t@echo line {i}\n"));
        }
        mk.push_str("\t@echo boom >&2; exit 3\nok:\n\t@echo fine\n");
        std::fs::write(dir.join("Makefile"), mk).unwrap();
        let m = Make {
            src: dir.to_path_buf(),
            build: dir.join("out"),
            jobs: 1,
            ccache: false,
        };
        let log = dir.join("make.log");
        let mut ticks = 0;
        match m.run(&["all"], &log, &mut || ticks += 1).unwrap() {
            Ended::Failed(code, lines) => {
                assert_eq!(code, Some(2), "make exits 2 when a recipe fails");
                assert_eq!(lines.len(), TAIL);
                assert!(lines.iter().any(|l| l == "boom"), "{lines:?}");
                assert!(!lines.iter().any(|l| l == "line 0"), "{lines:?}");
            }
            Ended::Ok => panic!("make should have failed"),
        }
        assert!(matches!(
            m.run(&["ok"], &log, &mut || {}).unwrap(),
            Ended::Ok
        ));
    }
}
