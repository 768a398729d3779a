//! A run's hold on the knobs: originals journaled before the first change,
//! values set and read back per variant, and the originals written back when
//! the session is restored or dropped (normal end, error, signal, panic).
//! A session on the live machine holds the machine-wide knob lock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::journal::{self, Entry, Journal};
use super::lock::{Holder, KnobLock};
use super::{Plan, registry};
use crate::error::{Error, Result};

pub struct Session {
    root: PathBuf,
    journal_path: PathBuf,
    originals: Vec<(&'static registry::Knob, String)>,
    current: BTreeMap<String, String>,
    restored: bool,
    /// Released after the originals are back (dropped last).
    lock: Option<KnobLock>,
}

impl Session {
    /// Repairs journals left behind by dead runs (the last lock holder's and
    /// our own state directory's), reads the originals and journals them
    /// durably, then records us in the lock. Nothing is changed yet.
    pub fn begin(
        plan: &Plan,
        root: &Path,
        journal_path: &Path,
        mut lock: Option<KnobLock>,
    ) -> Result<Session> {
        for line in recover_all(lock.as_mut(), root, journal_path)? {
            eprintln!("vmscale: {line}");
        }
        let mut originals = Vec::new();
        for (k, _) in &plan.knobs {
            originals.push((*k, k.read(root)?));
        }
        let j = Journal {
            pid: std::process::id(),
            started_at: crate::timefmt::now(),
            entries: originals
                .iter()
                .map(|(k, v)| Entry {
                    name: k.name.to_string(),
                    path: k.file(root),
                    original: v.clone(),
                })
                .collect(),
        };
        journal::write(journal_path, &j)?;
        if let Some(l) = lock.as_mut() {
            l.record(&Holder {
                pid: j.pid,
                journal: journal_path.to_path_buf(),
                knobs: plan.knobs.iter().map(|(k, _)| k.name.to_string()).collect(),
            })?;
        }
        Ok(Session {
            root: root.to_path_buf(),
            journal_path: journal_path.to_path_buf(),
            current: originals
                .iter()
                .map(|(k, v)| (k.name.to_string(), v.clone()))
                .collect(),
            originals,
            restored: false,
            lock,
        })
    }

    /// Knob name -> value found before the run.
    pub fn originals(&self) -> BTreeMap<String, String> {
        self.originals
            .iter()
            .map(|(k, v)| (k.name.to_string(), v.clone()))
            .collect()
    }

    /// Sets every knob to its value in `values` (skipping those already
    /// set), verifying each by reading it back.
    pub fn apply(&mut self, values: &BTreeMap<String, String>) -> Result<()> {
        for (k, _) in &self.originals {
            let Some(v) = values
                .get(k.name)
                .map(|v| super::written_value(v).to_string())
            else {
                continue;
            };
            let v = &v;
            if self.current.get(k.name) == Some(v) && k.read(&self.root)? == *v {
                continue;
            }
            // Until read back the value is unknown; a failed write is restored too.
            self.current.remove(k.name);
            k.write_verified(&self.root, v)?;
            self.current.insert(k.name.to_string(), v.clone());
        }
        Ok(())
    }

    /// Writes the originals back, verifies them and removes the journal.
    /// Idempotent; on failure the journal stays for `vmscale restore`.
    pub fn restore(&mut self) -> Result<()> {
        if self.restored {
            return Ok(());
        }
        let mut errors = Vec::new();
        for (k, v) in &self.originals {
            if let Err(e) = k.write_verified(&self.root, v) {
                errors.push(e.to_string());
            }
        }
        if !errors.is_empty() {
            return Err(Error::Failed(format!(
                "{}; the journal {} is kept: fix the cause and run `vmscale restore`",
                errors.join("; "),
                self.journal_path.display()
            )));
        }
        journal::remove(&self.journal_path)?;
        if let Some(l) = self.lock.as_mut() {
            l.clear()?;
        }
        self.restored = true;
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!("vmscale: restoring knobs failed: {e}");
        }
    }
}

/// With the lock held: restores the journal of the last holder if it did
/// not finish, then the journal at `journal_path`; one line per knob.
pub fn recover_all(
    lock: Option<&mut KnobLock>,
    root: &Path,
    journal_path: &Path,
) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    if let Some(l) = lock {
        if let Some(h) = l.holder()
            && h.journal != journal_path
        {
            lines.extend(recover(&h.journal, root)?);
        }
        // The record is cleared only once its journal is restored.
        l.clear()?;
    }
    lines.extend(recover(journal_path, root)?);
    Ok(lines)
}

/// Restores the knobs of a journal whose run is gone and removes it;
/// returns one line per knob restored, nothing when there is no journal.
/// Call it holding the knob lock: a live run holds it while it has a
/// journal. An entry is written back only when it names a registry knob at
/// exactly its file under `root`, reached through no symbolic link, with a
/// value the knob takes; anything else is refused, saying why, and the
/// journal kept.
pub fn recover(journal_path: &Path, root: &Path) -> Result<Vec<String>> {
    let Some(j) = journal::read(journal_path)? else {
        return Ok(Vec::new());
    };
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for e in &j.entries {
        let k = match checked_entry(e, root) {
            Ok(k) => k,
            Err(refused) => {
                errors.push(refused.to_string());
                continue;
            }
        };
        let original = match k.validate(&e.original) {
            Ok(v) => v,
            Err(err) => {
                errors.push(format!("refused journal entry {}: {err}", e.name));
                continue;
            }
        };
        let before = k.read(root).unwrap_or_else(|_| "?".into());
        match k.write_verified(root, &original) {
            Ok(()) => lines.push(format!(
                "restored knob {} to '{original}' (was '{before}') from the journal of run pid {} \
                 started {}",
                k.name, j.pid, j.started_at
            )),
            Err(err) => errors.push(err.to_string()),
        }
    }
    if !errors.is_empty() {
        return Err(Error::Refused(format!(
            "{}; the journal {} is kept: check who wrote it, restore by hand if needed, and \
             delete it",
            errors.join("; "),
            journal_path.display()
        )));
    }
    journal::remove(journal_path)?;
    Ok(lines)
}

/// The registry knob a journal entry may write: the journal is data, not a
/// licence to write anywhere. A refusal names the entry and why.
fn checked_entry(e: &Entry, root: &Path) -> Result<&'static registry::Knob> {
    let refused = |why: String| {
        Error::Refused(format!(
            "refused journal entry {} at {}: {why}",
            e.name,
            e.path.display()
        ))
    };
    let k = registry::find(&e.name).ok_or_else(|| refused("not a known knob".into()))?;
    let file = k.file(root);
    if e.path != file {
        return Err(refused(format!(
            "knob {} lives at {}, not at this path",
            k.name,
            file.display()
        )));
    }
    if let Some(link) = crate::state_dir::symlink_below(root, &file) {
        return Err(refused(format!("{} is a symbolic link", link.display())));
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake root holding THP defrag and swappiness files, and where the
    /// journal goes (a directory not made yet).
    struct Fake {
        _tmp: tempfile::TempDir,
        root: PathBuf,
        journal: PathBuf,
    }

    fn fake_root() -> Fake {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let thp = root.join("sys/kernel/mm/transparent_hugepage");
        std::fs::create_dir_all(&thp).unwrap();
        std::fs::create_dir_all(root.join("proc/sys/vm")).unwrap();
        std::fs::write(
            thp.join("defrag"),
            "always defer defer+madvise [madvise] never\n",
        )
        .unwrap();
        std::fs::write(root.join("proc/sys/vm/swappiness"), "60\n").unwrap();
        Fake {
            journal: root.join("state/knobs.journal"),
            root,
            _tmp: tmp,
        }
    }

    fn read(root: &Path, rel: &str) -> String {
        registry::current(&std::fs::read_to_string(root.join(rel)).unwrap())
    }

    fn plan() -> Plan {
        Plan::parse(&["thp_defrag=never,always".into(), "swappiness=10".into()]).unwrap()
    }

    /// A file `recover` must never write, holding "keep".
    fn victim(root: &Path) -> PathBuf {
        let victim = root.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        victim
    }

    /// A journal left by no live process, restoring one knob at `path`.
    fn planted(name: &str, path: PathBuf, original: &str) -> Journal {
        Journal {
            pid: u32::MAX,
            started_at: String::new(),
            entries: vec![Entry {
                name: name.into(),
                path,
                original: original.into(),
            }],
        }
    }

    #[test]
    fn set_verify_restore_and_journal() {
        let fake = fake_root();
        let (root, jp) = (fake.root.as_path(), &fake.journal);
        let p = plan();
        {
            let mut s = Session::begin(&p, root, jp, None).unwrap();
            assert_eq!(s.originals()["thp_defrag"], "madvise");
            let j = journal::read(jp).unwrap().unwrap();
            assert_eq!(j.entries.len(), 2);
            assert_eq!(j.entries[1].original, "60");
            for combo in p.combos() {
                s.apply(&combo).unwrap();
                assert_eq!(
                    read(root, "sys/kernel/mm/transparent_hugepage/defrag"),
                    combo["thp_defrag"]
                );
                assert_eq!(read(root, "proc/sys/vm/swappiness"), "10");
            }
            // Dropped here, mid-run, as on an error or a panic.
        }
        assert_eq!(
            read(root, "sys/kernel/mm/transparent_hugepage/defrag"),
            "madvise"
        );
        assert_eq!(read(root, "proc/sys/vm/swappiness"), "60");
        assert_eq!(journal::read(jp).unwrap(), None);
    }

    #[test]
    fn restores_on_panic() {
        let fake = fake_root();
        let (root, jp) = (fake.root.as_path(), &fake.journal);
        let r = std::panic::catch_unwind(|| {
            let mut s = Session::begin(&plan(), root, jp, None).unwrap();
            s.apply(&plan().combos()[0]).unwrap();
            panic!("workload bug");
        });
        assert!(r.is_err());
        assert_eq!(
            read(root, "sys/kernel/mm/transparent_hugepage/defrag"),
            "madvise"
        );
    }

    #[test]
    fn recover_repairs_a_journal_left_by_a_killed_run() {
        let fake = fake_root();
        let (root, jp) = (fake.root.as_path(), &fake.journal);
        let mut s = Session::begin(&plan(), root, jp, None).unwrap();
        s.apply(&plan().combos()[1]).unwrap();
        std::mem::forget(s); // as SIGKILL would
        assert_eq!(
            read(root, "sys/kernel/mm/transparent_hugepage/defrag"),
            "always"
        );
        let lines = recover(jp, root).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("thp_defrag to 'madvise' (was 'always')"));
        assert_eq!(
            read(root, "sys/kernel/mm/transparent_hugepage/defrag"),
            "madvise"
        );
        assert_eq!(read(root, "proc/sys/vm/swappiness"), "60");
        assert!(recover(jp, root).unwrap().is_empty());
    }

    #[test]
    fn journal_pointing_elsewhere_is_not_written() {
        let fake = fake_root();
        let (root, jp) = (fake.root.as_path(), &fake.journal);
        let victim = victim(root);
        journal::write(jp, &planted("thp_defrag", victim.clone(), "never")).unwrap();
        assert!(
            recover(jp, root)
                .unwrap_err()
                .to_string()
                .contains("lives at /")
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(jp.exists(), "a refused journal is kept");
    }

    /// The planted-journal attack: a path that merely ends with the knob's
    /// path, and the knob's own path made a symbolic link to a victim.
    #[test]
    fn suffix_paths_and_symlinked_knobs_are_refused() {
        let fake = fake_root();
        let (root, jp) = (fake.root.as_path(), &fake.journal);
        let victim = victim(root);
        let elsewhere = root.join("evil/proc/sys/vm/swappiness");
        std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &elsewhere).unwrap();
        let planted = |path: PathBuf| planted("swappiness", path, "10");
        journal::write(jp, &planted(elsewhere.clone())).unwrap();
        let e = recover(jp, root).unwrap_err();
        assert!(matches!(e, Error::Refused(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("not at this path"), "{e}");
        let knob = root.join("proc/sys/vm/swappiness");
        std::fs::remove_file(&knob).unwrap();
        std::os::unix::fs::symlink(&victim, &knob).unwrap();
        journal::write(jp, &planted(knob.clone())).unwrap();
        let e = recover(jp, root).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }
}
