//! Kernel knob A/B runs: `--knob NAME=V1,V2` parsed against the registry of
//! known knobs, checked before anything changes, then set per variant,
//! verified, and always restored (see `session` and `journal`), one run at
//! a time on the machine (see `lock`).

pub mod journal;
pub mod lock;
pub mod registry;
pub mod session;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

pub use registry::Knob;
pub use session::Session;

/// Most variants one run may cross (the product of the value counts).
const MAX_COMBOS: usize = 64;

/// The value a variant writes: "60" for the A/A variant "60#2".
pub fn written_value(v: &str) -> &str {
    v.split_once('#').map_or(v, |(w, _)| w)
}

/// The knobs a run varies and the values each takes, validated.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub knobs: Vec<(&'static Knob, Vec<String>)>,
}

/// The root knob files live under on this machine.
pub fn live_root() -> PathBuf {
    PathBuf::from("/")
}

impl Plan {
    /// Parses `NAME=V1,V2[,...]` specs; an unknown knob, a bad value or a
    /// repeated knob is an error naming the fix (a repeated value is an
    /// A/A comparison).
    pub fn parse(specs: &[String]) -> Result<Plan> {
        let mut knobs: Vec<(&'static Knob, Vec<String>)> = Vec::new();
        for spec in specs {
            let (name, values) = spec.split_once('=').ok_or_else(|| {
                Error::Input(format!(
                    "--knob '{spec}': write NAME=VALUE[,VALUE...], e.g. thp_defrag=madvise,never"
                ))
            })?;
            let knob = registry::find(name.trim()).ok_or_else(|| {
                Error::Input(format!(
                    "--knob '{spec}': unknown knob '{}'; known knobs: {}",
                    name.trim(),
                    registry::names()
                ))
            })?;
            if knobs.iter().any(|(k, _)| k.name == knob.name) {
                return Err(Error::Input(format!(
                    "--knob {}: given twice; list all its values in one --knob",
                    knob.name
                )));
            }
            let mut vals: Vec<String> = Vec::new();
            for v in values.split(',') {
                let v = knob.validate(v)?;
                // A value listed again is an A/A comparison: its later
                // variants are told apart as "60#2", "60#3".
                let again = vals.iter().filter(|x| written_value(x) == v).count();
                vals.push(if again > 0 {
                    format!("{v}#{}", again + 1)
                } else {
                    v
                });
            }
            knobs.push((knob, vals));
        }
        let plan = Plan { knobs };
        let n = plan.combos().len();
        if !plan.is_empty() && n > MAX_COMBOS {
            return Err(Error::Input(format!(
                "--knob: {n} combinations of values; at most {MAX_COMBOS} fit one run, split it"
            )));
        }
        Ok(plan)
    }

    pub fn is_empty(&self) -> bool {
        self.knobs.is_empty()
    }

    /// The values the plan gives the knob `name`, if it varies it.
    pub fn values(&self, name: &str) -> Option<&[String]> {
        self.knobs
            .iter()
            .find(|(k, _)| k.name == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The cross product of values, first knob varying slowest; one empty
    /// map when no knob is varied.
    pub fn combos(&self) -> Vec<BTreeMap<String, String>> {
        let mut out = vec![BTreeMap::new()];
        for (k, vals) in &self.knobs {
            out = out
                .iter()
                .flat_map(|m| {
                    vals.iter().map(move |v| {
                        let mut m = m.clone();
                        m.insert(k.name.to_string(), v.clone());
                        m
                    })
                })
                .collect();
        }
        out
    }

    /// Refuses a run that cannot set its knobs, before anything changes:
    /// not root, a knob missing on this kernel, a file not writable, or a
    /// journal in a state directory that fails its checks.
    pub fn preflight(&self, root: &Path, journal_path: &Path) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let uid = crate::exec::euid();
        if uid != 0 {
            return Err(Error::Refused(format!(
                "--knob changes kernel settings and needs root (effective uid is {uid}): run \
                 vmscale as root, e.g. with sudo, or drop --knob"
            )));
        }
        for (k, _) in &self.knobs {
            let f = k.file(root);
            if !f.exists() {
                return Err(missing(k, root));
            }
            k.read(root).map_err(Error::refusal)?;
            if let Some(link) = crate::state_dir::symlink_below(root, &f) {
                return Err(Error::Refused(format!(
                    "knob {}: {} is a symbolic link; vmscale writes knob files only",
                    k.name,
                    link.display()
                )));
            }
            std::fs::OpenOptions::new()
                .write(true)
                .open(&f)
                .map_err(|e| {
                    Error::Refused(format!(
                        "knob {}: {} is not writable: {e}",
                        k.name,
                        f.display()
                    ))
                })?;
        }
        journal::read(journal_path).map_err(Error::refusal)?;
        Ok(())
    }

    /// What the store keeps as the run's knobs: originals and variants.
    pub fn describe(&self, originals: &BTreeMap<String, String>) -> serde_json::Value {
        serde_json::json!({
            "original": originals,
            "values": self.knobs.iter()
                .map(|(k, v)| (k.name.to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            "files": self.knobs.iter()
                .map(|(k, _)| (k.name.to_string(), format!("/{}", k.path)))
                .collect::<BTreeMap<_, _>>(),
        })
    }
}

/// The refusal for a knob whose file this kernel lacks: the file, the
/// kernel's release and, where the knob names it, the kernel it needs.
fn missing(k: &Knob, root: &Path) -> Error {
    let release = crate::machine::read_trimmed(root, "/proc/sys/kernel/osrelease")
        .map_or_else(String::new, |r| format!(" (Linux {r})"));
    let needs = if k.needs.is_empty() {
        String::new()
    } else {
        format!("; it needs {}", k.needs)
    };
    Error::Refused(format!(
        "knob {}: {} does not exist on this kernel{release}{needs}; drop --knob {}",
        k.name,
        k.file(root).display(),
        k.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn cross_product_first_knob_slowest() {
        let p = Plan::parse(&specs(&["thp=never,always", "kernel.numa_balancing=0,1,2"])).unwrap();
        let c = p.combos();
        assert_eq!(c.len(), 6);
        assert_eq!(c[0]["thp"], "never");
        assert_eq!(c[0]["numa_balancing"], "0");
        assert_eq!(c[2]["numa_balancing"], "2");
        assert_eq!(c[3]["thp"], "always");
        assert_eq!(Plan::parse(&[]).unwrap().combos(), vec![BTreeMap::new()]);
    }

    #[test]
    fn bad_specs_are_refused_with_the_fix() {
        let e = |s: &[&str]| match Plan::parse(&specs(s)).unwrap_err() {
            Error::Input(m) => m,
            other => panic!("not bad input: {other:?}"),
        };
        assert!(e(&["thp_64K=inherit,sometimes"]).contains("always, inherit, madvise, never"));
        assert!(e(&["thp"]).contains("NAME=VALUE"));
        assert!(e(&["nosuch=1"]).contains("known knobs: thp"));
        assert!(e(&["thp=sometimes"]).contains("always, madvise, never"));
        let aa = Plan::parse(&specs(&["thp=never,never"])).unwrap().combos();
        assert_eq!(
            (aa[0]["thp"].as_str(), aa[1]["thp"].as_str()),
            ("never", "never#2")
        );
        assert_eq!(written_value(&aa[1]["thp"]), "never");
        assert!(e(&["thp=never", "thp_enabled=always"]).contains("given twice"));
        assert!(
            e(&[
                "swappiness=1,2,3,4,5,6,7,8",
                "zone_reclaim=0,1,2,3,4,5,6,7",
                "overcommit=0,1"
            ])
            .contains("combinations")
        );
    }

    /// A kernel before 6.8 (Debian 12's 6.1): THP without per-size
    /// directories. The refusal names the kernel and the version needed.
    #[test]
    fn per_size_thp_on_a_kernel_without_it_is_refused_naming_the_version() {
        let p = Plan::parse(&specs(&["thp_64K=never,always"])).unwrap();
        let root = crate::scratch::at("linux-6.1");
        std::fs::create_dir_all(root.join("sys/kernel/mm/transparent_hugepage")).unwrap();
        std::fs::write(
            root.join("sys/kernel/mm/transparent_hugepage/enabled"),
            "always [madvise] never\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
        std::fs::write(root.join("proc/sys/kernel/osrelease"), "6.1.0-57-amd64\n").unwrap();
        let j = root.join("state/j");
        let Err(Error::Refused(e)) = p.preflight(&root, &j) else {
            panic!("a per-size knob on a kernel without it is not refused")
        };
        if crate::exec::euid() == 0 {
            assert!(e.contains("hugepages-64kB/enabled does not exist"), "{e}");
            assert!(e.contains("Linux 6.1.0-57-amd64"), "{e}");
            assert!(e.contains("needs Linux 6.8+"), "{e}");
        } else {
            assert!(e.contains("needs root"), "{e}");
        }
    }

    #[test]
    fn preflight_refuses_missing_files() {
        let p = Plan::parse(&specs(&["thp_defrag=never"])).unwrap();
        let root = crate::scratch::at("no-such-root");
        let j = root.join("j");
        let Err(Error::Refused(e)) = p.preflight(&root, &j) else {
            panic!("a knob file that is not there is not refused")
        };
        if crate::exec::euid() == 0 {
            assert!(e.contains("does not exist"), "{e}");
        } else {
            assert!(e.contains("needs root"), "{e}");
        }
    }
}
