//! The big machines of issue 23 as sysfs/procfs trees, generated at test
//! time by tests/fixtures/gen-fake-big.sh (too big to commit): 512 CPUs in
//! 16 nodes on 2 sockets with SMT-2, and 1024 CPUs in 32 nodes on 4.

use super::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A generated tree, removed with its scratch directory.
pub struct Machine {
    pub root: PathBuf,
    pub scratch: Scratch,
}

/// The shapes: (name, sockets, nodes per socket, cores per node, threads,
/// cores per L3, GiB per node).
pub const BIG512: (&str, u32, u32, u32, u32, u32, u32) = ("big512", 2, 8, 16, 2, 8, 64);
pub const BIG1024: (&str, u32, u32, u32, u32, u32, u32) = ("big1024", 4, 8, 16, 2, 8, 32);

/// Generates a tree of `shape` (see [`BIG512`]).
pub fn generate(shape: (&str, u32, u32, u32, u32, u32, u32)) -> Machine {
    let (name, s, n, k, t, l, g) = shape;
    let scratch = Scratch::new(name);
    let root = scratch.dir.join("machine");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gen-fake-big.sh");
    let out = Command::new("sh")
        .arg(&script)
        .arg(&root)
        .args([s, n, k, t, l, g].map(|v| v.to_string()))
        .output()
        .expect("run gen-fake-big.sh");
    assert!(
        out.status.success(),
        "gen-fake-big.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Machine { root, scratch }
}

/// `sysinfo --json`'s counts: online CPUs, cores, threads per core,
/// packages, nodes (0 where one is null).
pub fn counts(sys: &serde_json::Value) -> [u64; 5] {
    [
        "online_cpus",
        "cores",
        "threads_per_core",
        "packages",
        "nodes",
    ]
    .map(|k| sys["counts"][k].as_u64().unwrap_or(0))
}

impl Machine {
    /// Runs vmscale with this tree as the machine and a private store.
    pub fn vmscale(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_vmscale"))
            .args(args)
            .env("VMSCALE_DB", self.scratch.db())
            .env("VMSCALE_MACHINE_ROOT", &self.root)
            .env_remove("XDG_DATA_HOME")
            .output()
            .expect("run vmscale")
    }
}
