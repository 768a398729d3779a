//! Levels of /proc/meminfo over a sample (`run --meminfo FIELD,...`): a
//! thread beside the tasks reads the file once a second, as lkp's meminfo
//! monitor does over its whole job, the first reading half a second in;
//! the sample keeps each field's mean of its readings (kB) as the figure
//! `meminfo.FIELD`. `nodeN.FIELD` reads node N's meminfo under
//! /sys/devices/system/node (lkp's numa-meminfo). Its cost in the timed
//! section: docs/pft.md's probe table (`bench/probe_cost.rs`, probe
//! `meminfo`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::machine::memory::{read_meminfo, read_node_meminfo};

/// A sample's figure of `field` is `meminfo.field`.
pub const PREFIX: &str = "meminfo.";

/// How often the thread reads, as lkp's monitor.
pub const PERIOD: Duration = Duration::from_secs(1);

/// One `--meminfo` field: a /proc/meminfo field, or a node's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Field {
    /// `Some(n)`: node n's meminfo.
    pub node: Option<usize>,
    /// As the file spells it (`Active(file)`, `AnonHugePages`).
    pub name: String,
}

impl std::fmt::Display for Field {
    /// `AnonPages`, `node0.AnonPages`: the figure's name after `meminfo.`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.node {
            Some(n) => write!(f, "node{n}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// One `--meminfo` field as /proc/meminfo spells it (`Active(file)`,
/// `Hugepages_Total`), or `nodeN.` and a node meminfo's field.
pub fn field(text: &str) -> Result<Field> {
    let (node, name) = match text.split_once('.') {
        Some((n, name)) => (n.strip_prefix("node").and_then(|n| n.parse().ok()), name),
        None => (None, text),
    };
    let named = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '(' | ')'));
    if named && (node.is_some() || !text.contains('.')) {
        Ok(Field {
            node,
            name: name.to_string(),
        })
    } else {
        Err(Error::Input(format!(
            "--meminfo '{text}' is not a meminfo field name: give names as /proc/meminfo \
             spells them, or nodeN. and a node's, comma-separated (e.g. \
             AnonPages,Active(file),node0.AnonPages)"
        )))
    }
}

/// The levels of `fields` now, in kB, each file read once.
fn read(root: &Path, fields: &[Field]) -> BTreeMap<Field, u64> {
    let mut files: BTreeMap<Option<usize>, BTreeMap<String, u64>> = BTreeMap::new();
    fields
        .iter()
        .filter_map(|f| {
            let file = files.entry(f.node).or_insert_with(|| match f.node {
                Some(n) => read_node_meminfo(root, n),
                None => read_meminfo(root),
            });
            Some((f.clone(), *file.get(&f.name)?))
        })
        .collect()
}

/// Refuses fields this kernel's meminfo files under `root` do not have,
/// naming the ones they have.
pub fn check(root: &Path, fields: &[Field]) -> Result<()> {
    let have = read(root, fields);
    let Some(first) = fields.iter().find(|f| !have.contains_key(f)) else {
        return Ok(());
    };
    let missing: Vec<&str> = fields
        .iter()
        .filter(|f| f.node == first.node && !have.contains_key(f))
        .map(|f| f.name.as_str())
        .collect();
    let (file, names) = match first.node {
        Some(n) => (
            format!("node {n}'s meminfo"),
            read_node_meminfo(root, n).into_keys().collect::<Vec<_>>(),
        ),
        None => (
            "/proc/meminfo".to_string(),
            read_meminfo(root).into_keys().collect(),
        ),
    };
    let has = if names.is_empty() {
        "the file is absent (no such node?)".to_string()
    } else {
        format!("it has {}", names.join(", "))
    };
    Err(Error::Input(
        crate::text::fill(
            &format!(
                "--meminfo: this kernel's {file} has no {}: {has}",
                missing.join(", ")
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
pub fn start(root: &Path, fields: &[Field], period: Duration) -> Result<Sampler> {
    let (stop, stopped) = mpsc::channel::<()>();
    let (root, fields): (PathBuf, Vec<Field>) = (root.to_path_buf(), fields.to_vec());
    let thread = std::thread::Builder::new()
        .name("meminfo".into())
        .spawn(move || {
            let mut sums: BTreeMap<Field, (f64, u32)> = BTreeMap::new();
            let mut wait = period / 2;
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                for (f, kb) in read(&root, &fields) {
                    let s = sums.entry(f).or_default();
                    s.0 += kb as f64;
                    s.1 += 1;
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

    /// /proc/meminfo holding `text`, and node 1's meminfo.
    fn root_with(text: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let node = d.path().join("sys/devices/system/node/node1");
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::create_dir_all(&node).unwrap();
        std::fs::write(d.path().join("proc/meminfo"), text).unwrap();
        std::fs::write(
            node.join("meminfo"),
            "Node 1 MemTotal: 50 kB\nNode 1 AnonPages: 4 kB\n",
        )
        .unwrap();
        d
    }

    #[test]
    fn a_nodes_field_is_read_from_its_file_and_a_missing_node_is_named() {
        let d = root_with("AnonPages: 7 kB\n");
        check(d.path(), &[f("node1.AnonPages"), f("AnonPages")]).unwrap();
        let Err(Error::Input(e)) = check(d.path(), &[f("node1.Shmem")]) else {
            panic!("accepted a field node 1 lacks");
        };
        let e = e.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            e.contains("node 1's meminfo has no Shmem: it has AnonPages, MemTotal"),
            "{e}"
        );
        let Err(Error::Input(e)) = check(d.path(), &[f("node3.AnonPages")]) else {
            panic!("accepted a node that is not there");
        };
        assert!(
            e.contains("node 3's meminfo") && e.contains("absent"),
            "{e}"
        );
    }

    fn f(text: &str) -> Field {
        field(text).unwrap()
    }

    #[test]
    fn field_names_are_the_files_spelling() {
        assert_eq!(f("Active(file)").to_string(), "Active(file)");
        assert_eq!(f("Hugepages_Total").node, None);
        let node = f("node12.AnonPages");
        assert_eq!((node.node, node.name.as_str()), (Some(12), "AnonPages"));
        assert_eq!(node.to_string(), "node12.AnonPages");
        for bad in [
            "",
            "Active file",
            "../x",
            "Mapped:",
            "node.X",
            "nodeX.Y",
            "node0.",
            "n0.X",
            "a.b.c",
        ] {
            assert!(matches!(field(bad), Err(Error::Input(_))), "{bad}");
        }
    }

    #[test]
    fn a_field_the_kernel_lacks_is_refused_with_the_ones_it_has() {
        let d = root_with("MemTotal: 100 kB\nAnonPages: 7 kB\n");
        check(d.path(), &[f("AnonPages")]).unwrap();
        let Err(Error::Input(e)) = check(d.path(), &[f("AnonPages"), f("Zswap")]) else {
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
            &[f("AnonPages"), f("Shmem"), f("node1.AnonPages")],
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
        assert_eq!(m["meminfo.node1.AnonPages"], 4.0);
    }

    #[test]
    fn a_sample_shorter_than_half_a_period_has_no_reading() {
        let d = root_with("AnonPages: 10 kB\n");
        let s = start(d.path(), &[f("AnonPages")], Duration::from_secs(60)).unwrap();
        assert!(s.finish().is_empty());
    }
}
