//! `vmscale cache` and `vmscale cache prune` end to end, on a cache of
//! the test's own (VMSCALE_CACHE_DIR). Filled by real guest runs of two
//! Debian kernels (what a bisect of them leaves: unpacked packages, PVH
//! images, the guest binary), a prune to 100M leaves at most 100 MiB on
//! disk (counted here, not by vmscale) and a later guest run still works,
//! making again what it needs; a run over the cap prunes the cache itself.
//! On a planted cache: an entry another process holds locked is kept, a
//! link planted in the cache is never followed (what it points at stays
//! whole), old temporaries go, and bad sizes and ages exit 2.

use crate::common;

use std::collections::HashSet;
use std::fs::{File, FileTimes};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use common::guest::{GuestRun, available, kernels};

const MIB: u64 = 1 << 20;

/// `vmscale ARGS` with the cache at `cache`.
fn vmscale(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(args)
        .env("VMSCALE_CACHE_DIR", cache)
        .env_remove("VMSCALE_CACHE_MAX")
        .output()
        .expect("run vmscale")
}

/// Waits (at most 30 s) until no process holds a flock on `path`.
fn wait_free(path: &Path) {
    let f = File::open(path).unwrap();
    for _ in 0..600 {
        if f.try_lock().is_ok() {
            // Unlocked explicitly: a child forked meanwhile by another test
            // thread shares this descriptor until it execs, and would keep
            // a lock that is only dropped with the file.
            f.unlock().unwrap();
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} is still locked after 30 s", path.display());
}

/// Bytes on disk under `dir` as du counts them: allocated blocks, each
/// inode once, links not followed.
fn du(dir: &Path) -> u64 {
    let mut seen = HashSet::new();
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if seen.insert((m.dev(), m.ino())) {
            total += m.blocks() * 512;
        }
        if m.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    total
}

/// Sets a file's or directory's access and modification times to `ago`
/// before now.
fn age(path: &Path, ago: Duration) {
    let t = SystemTime::now() - ago;
    File::open(path)
        .unwrap()
        .set_times(FileTimes::new().set_accessed(t).set_modified(t))
        .unwrap();
}

/// A directory entry holding `bytes` of real data, used `ago` before now.
fn plant(dir: &Path, bytes: u64, ago: Duration) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("data"), vec![7u8; bytes as usize]).unwrap();
    age(&dir.join("data"), ago);
    age(dir, ago);
}

/// One tiny pft step in a TCG guest of each kernel, on the cache `cache`.
fn guest(db: &Path, cache: &Path, kernels: &[PathBuf], cap: &str) -> Output {
    let mut run = GuestRun::tcg(&kernels[0], "512M");
    for k in &kernels[1..] {
        run = run.kernel(k);
    }
    run.step(&[
        "run", "pft", "--tasks", "1", "--size", "16M", "--reps", "1", "--warmup", "0",
    ])
    .command(db)
    .env("VMSCALE_CACHE_DIR", cache)
    .env("VMSCALE_CACHE_MAX", cap)
    .output()
    .expect("run vmscale guest")
}

fn kinds(listing: &serde_json::Value) -> Vec<String> {
    listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn prune_to_100m_after_guest_runs_leaves_100m_and_a_guest_runs_again() {
    if !available("cache prune after guest runs") {
        return;
    }
    let scratch = common::Scratch::new("cache-guest");
    let cache = scratch.dir.join("cache");
    let k = kernels();
    common::ok(&guest(&scratch.db(), &cache, k, "off"));
    let listing = common::json(&vmscale(&cache, &["cache", "--json"]));
    let found = kinds(&listing);
    for kind in ["unpacked", "pvh", "bin"] {
        assert!(found.iter().any(|k| k == kind), "no {kind}: {listing}");
    }
    let before = du(&cache);
    println!("the guest runs left {before} bytes");
    assert!(before > 100 * MIB, "{before} bytes: too few to prune");
    let text = common::ok(&vmscale(&cache, &["cache"]));
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(text.contains("unpacked") && text.contains("ago"), "{text}");

    let o = vmscale(&cache, &["cache", "prune", "--max-size", "100M"]);
    let said = common::ok(&o);
    assert!(said.contains("removed"), "{said}");
    let after = du(&cache);
    assert!(
        after <= 100 * MIB,
        "{after} bytes left after --max-size 100M"
    );

    // A run over the cap (here 250M; what the two kernels' run uses is
    // about 200 MB: 196.5 MB here) makes again what the prune took and then removes what
    // it does not use, least recently used first: the two old entries
    // planted beside it.
    for name in ["old-a", "old-b"] {
        plant(
            &cache.join("unpacked").join(name),
            60 * MIB,
            Duration::from_secs(86_400),
        );
    }
    let o = guest(&scratch.db(), &cache, k, "250M");
    common::ok(&o);
    assert!(common::stderr(&o).contains("over its cap"), "{o:?}");
    assert!(!cache.join("unpacked/old-a").exists());
    let listing = common::json(&vmscale(&cache, &["cache", "--json"]));
    let found = kinds(&listing);
    assert!(found.iter().any(|k| k == "unpacked"), "{listing}");
    assert!(
        du(&cache) <= 250 * MIB,
        "{} bytes over a cap of 250M",
        du(&cache)
    );
}

#[test]
fn a_locked_entry_is_kept_links_are_not_followed_and_old_temporaries_go() {
    let scratch = common::Scratch::new("cache-planted");
    let cache = scratch.dir.join("cache");
    let day = Duration::from_secs(86_400);
    plant(&cache.join("unpacked/oldest"), MIB, 3 * day);
    plant(&cache.join("unpacked/held"), MIB, 2 * day);
    plant(&cache.join("pvh/newest"), MIB, Duration::ZERO);
    // Outside the cache: a directory links point at.
    let outside = scratch.dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("precious"), vec![1u8; MIB as usize]).unwrap();
    std::os::unix::fs::symlink(&outside, cache.join("unpacked/oldest/out")).unwrap();
    age(&cache.join("unpacked/oldest"), 3 * day);
    std::os::unix::fs::symlink(&outside, cache.join("unpacked/link")).unwrap();
    std::os::unix::fs::symlink(&outside, cache.join("bin")).unwrap();
    // A killed writer's temporary, untouched for two hours, and one being
    // written now.
    plant(
        &cache.join("unpacked/.k.AbC.tmp"),
        MIB,
        2 * 3600 * Duration::from_secs(1),
    );
    plant(&cache.join("unpacked/.k.XyZ.tmp"), MIB, Duration::ZERO);
    // A kernel build holding kbuild/: its image stays.
    plant(&cache.join("kbuild/images/k1"), MIB, 3 * day);
    let kbuild_lock = File::create(cache.join("kbuild/lock")).unwrap();
    kbuild_lock.lock().unwrap();
    // A running vmscale's shared lock on the entry it uses.
    let held = File::open(cache.join("unpacked/held")).unwrap();
    held.lock_shared().unwrap();

    let listing = common::json(&vmscale(&cache, &["cache", "--json"]));
    let sizes: u64 = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["bytes"].as_u64().unwrap())
        .sum();
    assert!(
        sizes < 6 * MIB,
        "a link was followed when sizing: {listing}"
    );
    let in_use: Vec<&str> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["in_use"] == true)
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(in_use.contains(&"held"), "{listing}");
    assert!(listing["not_read"].to_string().contains("symbolic link"));

    let o = vmscale(&cache, &["cache", "prune", "--max-size", "1", "--json"]);
    let pruned = common::json(&o);
    let names = |key: &str| -> Vec<String> {
        pruned[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    // Least recently used first; the planted link is removed itself.
    let removed = names("removed");
    assert_eq!(removed.len(), 3, "{pruned}");
    assert_eq!(removed[0], "oldest", "{pruned}");
    assert!(removed.contains(&"link".to_string()), "{pruned}");
    assert!(!cache.join("unpacked/link").exists());
    let kept = names("kept");
    assert!(kept.contains(&"held".to_string()), "{pruned}");
    assert!(kept.contains(&"k1".to_string()), "{pruned}");
    assert_eq!(names("temporaries"), [".k.AbC.tmp"], "{pruned}");
    assert!(pruned.to_string().contains("kbuild/lock"), "{pruned}");
    assert!(cache.join("unpacked/held/data").is_file());
    assert!(cache.join("kbuild/images/k1/data").is_file());
    assert!(cache.join("unpacked/.k.XyZ.tmp").is_dir());
    assert!(!cache.join("unpacked/oldest").exists());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    assert_eq!(
        std::fs::read(outside.join("precious")).unwrap().len() as u64,
        MIB
    );
    assert!(
        std::fs::symlink_metadata(cache.join("bin"))
            .unwrap()
            .is_symlink()
    );

    // Let go, the entry goes by age; the text says what it did.
    drop(held);
    drop(kbuild_lock);
    // A child another test of this binary forked while the locks were
    // held keeps their descriptions (and so the flocks) until it execs:
    // wait until they are free (seen: 2 failures in 11 runs of cache::
    // under load 5).
    for lock in [cache.join("unpacked/held"), cache.join("kbuild/lock")] {
        wait_free(&lock);
    }
    let text = common::ok(&vmscale(&cache, &["cache", "prune", "--older-than", "1d"]));
    assert!(text.contains("removed unpacked held"), "{text}");
    assert!(text.contains("removed images"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(cache.join("pvh").is_dir());
}

#[test]
fn bad_sizes_and_ages_exit_2_naming_the_value() {
    let scratch = common::Scratch::new("cache-bad");
    let cache = scratch.dir.join("cache");
    plant(&cache.join("unpacked/kept"), MIB, Duration::ZERO);
    for (args, says) in [
        (&["cache", "prune", "--max-size", "lots"][..], "lots"),
        (&["cache", "prune", "--max-size", "0"], "out of range"),
        (&["cache", "prune", "--max-size=-5M"], "-5M"),
        (&["cache", "prune", "--older-than", "3x"], "3x"),
        (&["cache", "prune", "--older-than", "0d"], "0d"),
    ] {
        let o = vmscale(&cache, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(common::stderr(&o).contains(says), "{args:?}: {o:?}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(["cache", "prune"])
        .env("VMSCALE_CACHE_DIR", &cache)
        .env("VMSCALE_CACHE_MAX", "huge")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(common::stderr(&o).contains("VMSCALE_CACHE_MAX"), "{o:?}");
    assert!(cache.join("unpacked/kept/data").is_file());
}
