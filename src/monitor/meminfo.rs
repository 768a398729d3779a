//! Levels of /proc/meminfo over a sample (`run --meminfo FIELD,...`): a
//! thread beside the tasks reads the file once a second, as lkp's meminfo
//! monitor does over its whole job, the first reading half a second in;
//! the sample keeps each field's mean of its readings (kB) as the figure
//! `meminfo.FIELD`. Its cost in the timed section: docs/pft.md's probe
//! table (`bench/probe_cost.rs`, probe `meminfo`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::machine::memory::read_meminfo;

/// A sample's figure of `field` is `meminfo.field`.
pub const PREFIX: &str = "meminfo.";

/// How often the thread reads, as lkp's monitor.
pub const PERIOD: Duration = Duration::from_secs(1);

/// One `--meminfo` field name as /proc/meminfo spells them
/// (`Active(file)`, `AnonHugePages`, `Hugepages_Total`).
pub fn field(text: &str) -> Result<String> {
    let ok = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '(' | ')'));
    if ok {
        Ok(text.to_string())
    } else {
        Err(Error::Input(format!(
            "--meminfo '{text}' is not a /proc/meminfo field name: give names as the file \
             spells them, comma-separated (e.g. AnonPages,Active(file))"
        )))
    }
}

/// Refuses fields this kernel's /proc/meminfo under `root` does not
/// have, naming the ones it has.
pub fn check(root: &Path, fields: &[String]) -> Result<()> {
    if fields.is_empty() {
        return Ok(());
    }
    let have = read_meminfo(root);
    let missing: Vec<&str> = fields
        .iter()
        .filter(|f| !have.contains_key(f.as_str()))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = have.keys().map(String::as_str).collect();
    Err(Error::Input(
        crate::text::fill(
            &format!(
                "--meminfo: this kernel's /proc/meminfo has no {}: it has {}",
                missing.join(", "),
                names.join(", ")
            ),
            70,
            "",
            "  ",
        )
        .trim_end()
        .to_string(),
    ))
}

/// The thread reading during one sample.
pub struct Sampler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<BTreeMap<String, f64>>,
}

/// Starts reading `fields` of `<root>/proc/meminfo` every `period`, the
/// first reading half a period in.
pub fn start(root: &Path, fields: &[String], period: Duration) -> Result<Sampler> {
    let (stop, stopped) = mpsc::channel::<()>();
    let (root, fields): (PathBuf, Vec<String>) = (root.to_path_buf(), fields.to_vec());
    let thread = std::thread::Builder::new()
        .name("meminfo".into())
        .spawn(move || {
            let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
            let mut wait = period / 2;
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                let now = read_meminfo(&root);
                for f in &fields {
                    if let Some(&kb) = now.get(f) {
                        let s = sums.entry(f.clone()).or_default();
                        s.0 += kb as f64;
                        s.1 += 1;
                    }
                }
                wait = period;
            }
            sums.into_iter()
                .map(|(f, (sum, n))| (format!("{PREFIX}{f}"), sum / f64::from(n)))
                .collect()
        })
        .map_err(|e| Error::Failed(format!("cannot start the meminfo reader: {e}")))?;
    Ok(Sampler { stop, thread })
}

impl Sampler {
    /// Stops the thread; each field's mean as its figure, none for a
    /// sample that ended before the first reading.
    pub fn finish(self) -> BTreeMap<String, f64> {
        drop(self.stop);
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(text: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(d.path().join("proc/meminfo"), text).unwrap();
        d
    }

    #[test]
    fn field_names_are_the_files_spelling() {
        assert_eq!(field("Active(file)").unwrap(), "Active(file)");
        assert_eq!(field("Hugepages_Total").unwrap(), "Hugepages_Total");
        for bad in ["", "Active file", "../x", "Mapped:"] {
            assert!(matches!(field(bad), Err(Error::Input(_))), "{bad}");
        }
    }

    #[test]
    fn a_field_the_kernel_lacks_is_refused_with_the_ones_it_has() {
        let d = root_with("MemTotal: 100 kB\nAnonPages: 7 kB\n");
        check(d.path(), &["AnonPages".into()]).unwrap();
        let Err(Error::Input(e)) = check(d.path(), &["AnonPages".into(), "Zswap".into()]) else {
            panic!("accepted a missing field");
        };
        let e = e.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            e.contains("has no Zswap: it has AnonPages, MemTotal"),
            "{e}"
        );
    }

    #[test]
    fn the_mean_is_of_the_readings_taken_while_it_ran() {
        let d = root_with("AnonPages: 10 kB\nShmem: 3 kB\n");
        let s = start(
            d.path(),
            &["AnonPages".into(), "Shmem".into()],
            Duration::from_millis(20),
        )
        .unwrap();
        // Past the first reading (10 ms in), then the level changes.
        std::thread::sleep(Duration::from_millis(60));
        std::fs::write(
            d.path().join("proc/meminfo"),
            "AnonPages: 30 kB\nShmem: 3 kB\n",
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(60));
        let m = s.finish();
        let anon = m["meminfo.AnonPages"];
        assert!(anon > 10.0 && anon < 30.0, "{m:?}");
        assert_eq!(m["meminfo.Shmem"], 3.0);
    }

    #[test]
    fn a_sample_shorter_than_half_a_period_has_no_reading() {
        let d = root_with("AnonPages: 10 kB\n");
        let s = start(d.path(), &["AnonPages".into()], Duration::from_secs(60)).unwrap();
        assert!(s.finish().is_empty());
    }
}
