//! The source identity: a hash of src/, Cargo.toml and Cargo.lock, given
//! to the crate as `VMSCALE_SOURCE_ID` (`vmscale --version` shows it).
//! `vmscale guest` boots a separately built static guest binary only when
//! its identity is the running binary's: both built from the same sources.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files(&path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

fn main() {
    for p in ["src", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={p}");
    }
    let mut all = vec![PathBuf::from("Cargo.toml"), PathBuf::from("Cargo.lock")];
    files(Path::new("src"), &mut all);
    all.sort();
    let mut h = DefaultHasher::new();
    for path in &all {
        path.hash(&mut h);
        std::fs::read(path).unwrap_or_default().hash(&mut h);
    }
    println!("cargo:rustc-env=VMSCALE_SOURCE_ID={:016x}", h.finish());
}
