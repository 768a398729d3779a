//! The configuration a tree build uses: a base (a config file of the
//! user's, or one of the tree's own targets), then vmscale's fragment
//! (what the guest and the workloads need), then the user's
//! `--configitem`s, settled by `make olddefconfig`. Later assignments win,
//! as Kconfig reads a `.config` top to bottom. The effective config's
//! differences from the base are what is printed once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The options that choose a tree build's config, shared by `guest` and
/// `bisect`.
#[derive(clap::Args, Debug, Clone)]
pub struct Options {
    /// The base config of tree builds: a config file, `tinyconfig` or `defconfig`
    /// (x86_64_defconfig); vmscale's fragment and --configitem go on top
    #[arg(
        long,
        value_name = "FILE",
        default_value = "tinyconfig",
        requires = "tree"
    )]
    pub config: String,
    /// A config option of tree builds, CONFIG_NAME=VALUE; repeatable
    #[arg(long = "configitem", value_name = "CONFIG_X=V", requires = "tree")]
    pub config_items: Vec<String>,
}

/// Where the config starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// A config file of the user's (`--config FILE`).
    File { path: PathBuf, text: String },
    /// A make target of the tree (`tinyconfig`, `x86_64_defconfig`).
    Target(&'static str),
}

/// `--config` values that name a target of the tree instead of a file.
const TARGETS: &[(&str, &str)] = &[
    ("tiny", "tinyconfig"),
    ("tinyconfig", "tinyconfig"),
    ("defconfig", "x86_64_defconfig"),
    ("x86_64_defconfig", "x86_64_defconfig"),
];

/// The base when `--config` is not given: `make tinyconfig` plus the
/// fragments builds here in about 3 minutes on 2 CPUs, x86_64_defconfig
/// several times that (docs/bisect.md has both).
pub const DEFAULT_BASE: Base = Base::Target("tinyconfig");

impl Base {
    /// `--config VALUE`: a target's name, else a config file.
    pub fn parse(value: &str) -> Result<Base> {
        if let Some((_, t)) = TARGETS.iter().find(|(n, _)| *n == value) {
            return Ok(Base::Target(t));
        }
        let path = PathBuf::from(value);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::Input(format!(
                "--config {value}: {e}; give a kernel config file, `tinyconfig` or `defconfig`"
            ))
        })?;
        if !text.lines().any(|l| l.starts_with("CONFIG_")) {
            return Err(Error::Input(format!(
                "--config {value}: no CONFIG_ line in it: not a kernel config"
            )));
        }
        Ok(Base::File { path, text })
    }

    /// How the base is named in messages.
    pub fn name(&self) -> String {
        match self {
            Base::File { path, .. } => path.display().to_string(),
            Base::Target(t) => (*t).to_string(),
        }
    }
}

/// Options the guest needs that vmscale's required list (`crate::kconfig`)
/// does not name: what makes a small base boot under QEMU and print on
/// its serial console, and what the required options depend on without
/// selecting it (ZRAM needs a compressor, TRACEPOINTS a tracer, the swap
/// and disk drivers the block layer), plus what the guest's checks and
/// knobs read (IKCONFIG for the before-boot check, SCHED_DEBUG for the
/// NUMA scanner's debugfs knobs).
pub const ENABLERS: &[&str] = &[
    "TTY",
    "BUG",
    "BLOCK",
    "BLK_DEV",
    "CRYPTO",
    "CRYPTO_LZO",
    "ZSMALLOC",
    "FTRACE",
    "ENABLE_DEFAULT_TRACERS",
    "EPOLL",
    "EVENTFD",
    "SIGNALFD",
    "TIMERFD",
    "ADVISE_SYSCALLS",
    "MEMBARRIER",
    "MULTIUSER",
    "PROC_SYSCTL",
    "PCI_MSI",
    "VIRTIO_MENU",
    "CPU_SUP_INTEL",
    "CPU_SUP_AMD",
    "HYPERVISOR_GUEST",
    "PARAVIRT",
    "KVM_GUEST",
    "SCHED_SMT",
    "SCHED_MC",
    "X86_64_ACPI_NUMA",
    "HIGH_RES_TIMERS",
    "KALLSYMS",
    "SCHED_DEBUG",
    "IKCONFIG",
    "IKCONFIG_PROC",
];

/// vmscale's fragment: the guest's required options, then the enablers.
pub fn fragment() -> String {
    let mut out = crate::kconfig::fragment();
    out.push_str("# what they depend on and what a small base lacks (src/kbuild/config.rs)\n");
    for name in ENABLERS {
        out.push_str(&format!("CONFIG_{name}=y\n"));
    }
    out
}

/// One `--configitem CONFIG_NAME=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Without `CONFIG_`.
    pub name: String,
    /// `y`, `m`, `n`, a number or a quoted string.
    pub value: String,
}

impl Item {
    /// Parses `CONFIG_NAME=VALUE` (the prefix may be left out).
    pub fn parse(text: &str) -> Result<Item> {
        let bad = |why: &str| {
            Error::Input(format!(
                "--configitem {text}: {why}; give CONFIG_NAME=VALUE, e.g. CONFIG_NUMA=y, \
                 CONFIG_NR_CPUS=64 or CONFIG_LOCALVERSION=\"-x\""
            ))
        };
        let (name, value) = text.split_once('=').ok_or_else(|| bad("no `=`"))?;
        let name = name.strip_prefix("CONFIG_").unwrap_or(name);
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(bad("the name is not an option's (A-Z, 0-9 and _)"));
        }
        let quoted = value.len() >= 2
            && value.starts_with('"')
            && value.ends_with('"')
            && !value[1..value.len() - 1].contains(['"', '\n', '\\']);
        let word = !value.is_empty()
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'x');
        if !(quoted || word) {
            return Err(bad("the value is not y, m, n, a number or a quoted string"));
        }
        Ok(Item {
            name: name.to_string(),
            value: value.to_string(),
        })
    }

    /// The line in a `.config`.
    pub fn line(&self) -> String {
        if self.value == "n" {
            format!("# CONFIG_{} is not set", self.name)
        } else {
            format!("CONFIG_{}={}", self.name, self.value)
        }
    }
}

/// Refuses `--configitem`s that take away what a guest of `shape` needs
/// (`CONFIG_FILE_LOCKING=n`: the kernel would build and boot, then its
/// store fail as "locked"), before anything is built.
pub fn refuse_items(items: &[Item], shape: crate::kconfig::Shape) -> Result<()> {
    use crate::kconfig;
    // The items as the build applies them: after the fragment, last wins
    // (`=n` kept as a value, where the build writes "is not set").
    let mut text = kconfig::fragment();
    for i in items {
        text.push_str(&format!("CONFIG_{}={}\n", i.name, i.value));
    }
    let effect = kconfig::Config::parse(&text);
    let taken: Vec<kconfig::Requirement> = kconfig::check(&effect, shape)
        .missing
        .into_iter()
        .filter(|r| items.iter().any(|i| i.name == r.name))
        .collect();
    if taken.is_empty() {
        return Ok(());
    }
    let given: Vec<String> = taken
        .iter()
        .filter_map(|r| items.iter().rev().find(|i| i.name == r.name))
        .map(|i| format!("CONFIG_{}={}", i.name, i.value))
        .collect();
    Err(Error::Input(format!(
        "--configitem {} takes away what the guest needs: {}; drop it (vmscale's \
         fragment sets it)",
        given.join(" "),
        kconfig::describe(&taken)
    )))
}

/// What is appended to the base: the fragment, then the items.
pub fn additions(items: &[Item]) -> String {
    let mut out = fragment();
    if !items.is_empty() {
        out.push_str("# --configitem\n");
        for i in items {
            out.push_str(&i.line());
            out.push('\n');
        }
    }
    out
}

/// A `.config` as option → value; `# CONFIG_X is not set` is `n`.
pub fn parse(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for l in text.lines() {
        let l = l.trim();
        if let Some(rest) = l.strip_prefix("# CONFIG_")
            && let Some(name) = rest.strip_suffix(" is not set")
        {
            out.insert(name.to_string(), "n".to_string());
        } else if let Some((k, v)) = l.strip_prefix("CONFIG_").and_then(|r| r.split_once('=')) {
            out.insert(k.to_string(), v.to_string());
        }
    }
    out
}

/// The items an effective config does not hold as asked (a dependency
/// not met, a value out of range).
pub fn not_taken<'a>(items: &'a [Item], effective: &BTreeMap<String, String>) -> Vec<&'a Item> {
    items
        .iter()
        .filter(|i| {
            let got = effective.get(&i.name).map_or("n", String::as_str);
            got != i.value
        })
        .collect()
}

/// The effective config's differences from the base, one word each:
/// `+NAME` (now y), `NAME=m`, `-NAME` (now unset), `NAME=VALUE` (changed).
pub fn differences(base: &str, effective: &str) -> Vec<String> {
    let (b, e) = (parse(base), parse(effective));
    let unset = |v: Option<&String>| v.is_none_or(|v| v == "n");
    let mut names: Vec<&String> = b.keys().chain(e.keys()).collect();
    names.sort();
    names.dedup();
    // The compiler's version lines are the toolchain's, not the config's.
    let toolchain = |n: &str| n.ends_with("_VERSION") || n.ends_with("_VERSION_TEXT");
    names
        .into_iter()
        .filter(|n| !toolchain(n))
        .filter_map(|n| {
            let (old, new) = (b.get(n), e.get(n));
            if unset(old) && unset(new) || old == new {
                return None;
            }
            Some(match new.map(String::as_str) {
                None | Some("n") => format!("-{n}"),
                Some("y") if unset(old) => format!("+{n}"),
                Some(v) => format!("{n}={v}"),
            })
        })
        .collect()
}

/// The text printed once: how the config was made and how it differs.
pub fn describe(base: &Base, items: usize, diffs: &[String], width: usize) -> String {
    let mut s = format!(
        "kernel config: {} + vmscale's fragment ({} options){}: {} options differ from the base:\n",
        base.name(),
        fragment()
            .lines()
            .filter(|l| l.starts_with("CONFIG_"))
            .count(),
        if items > 0 {
            format!(" + {items} --configitem")
        } else {
            String::new()
        },
        diffs.len()
    );
    let mut line = String::from(" ");
    for d in diffs {
        if line.len() + 1 + d.len() > width && line.len() > 1 {
            s.push_str(&line);
            s.push('\n');
            line = String::from(" ");
        }
        line.push(' ');
        line.push_str(d);
    }
    if line.len() > 1 {
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// Reads the config a build left in `dir` (`.config`).
pub fn read(dir: &Path) -> Result<String> {
    let p = dir.join(".config");
    std::fs::read_to_string(&p).map_err(|e| Error::io("cannot read", &p, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_parse_and_bad_ones_are_bad_input() {
        let i = Item::parse("CONFIG_NR_CPUS=64").unwrap();
        assert_eq!((i.name.as_str(), i.value.as_str()), ("NR_CPUS", "64"));
        assert_eq!(
            Item::parse("NUMA=n").unwrap().line(),
            "# CONFIG_NUMA is not set"
        );
        assert_eq!(
            Item::parse("CONFIG_LOCALVERSION=\"-x\"").unwrap().line(),
            "CONFIG_LOCALVERSION=\"-x\""
        );
        assert!(Item::parse("CONFIG_X=0x10").is_ok());
        for bad in [
            "CONFIG_NUMA",
            "=y",
            "CONFIG_numa=y",
            "CONFIG_X=",
            "CONFIG_X=a b",
            "CONFIG_X=\"a\nb\"",
            "CONFIG_X=$(rm)",
        ] {
            assert!(Item::parse(bad).unwrap_err().is_input(), "{bad}");
        }
    }

    #[test]
    fn the_fragment_holds_the_required_list_then_the_items() {
        let items = [Item::parse("CONFIG_NUMA=n").unwrap()];
        let one = crate::kconfig::Shape { cpus: 1, nodes: 1 };
        let two_nodes = crate::kconfig::Shape { cpus: 2, nodes: 2 };
        // NUMA off is the user's business on one node, not on two.
        assert!(refuse_items(&items, one).is_ok());
        let e = refuse_items(&items, two_nodes).unwrap_err();
        assert!(
            e.is_input() && e.to_string().contains("CONFIG_NUMA=n"),
            "{e}"
        );
        let locks = [
            Item::parse("CONFIG_NR_CPUS=64").unwrap(),
            Item::parse("CONFIG_FILE_LOCKING=n").unwrap(),
        ];
        let msg = refuse_items(&locks, one).unwrap_err().to_string();
        assert!(
            msg.contains("--configitem CONFIG_FILE_LOCKING=n takes away")
                && msg.contains("CONFIG_FILE_LOCKING=y (the guest's SQLite store locks it)")
                && !msg.contains("NR_CPUS"),
            "{msg}"
        );
        // A module where built in is needed is refused; set again, allowed.
        let m = [Item::parse("CONFIG_FUTEX=m").unwrap()];
        assert!(refuse_items(&m, one).is_err());
        let again = [
            Item::parse("CONFIG_FUTEX=n").unwrap(),
            Item::parse("CONFIG_FUTEX=y").unwrap(),
        ];
        assert!(refuse_items(&again, one).is_ok());
        let text = additions(&items);
        let c = parse(&text);
        for r in crate::kconfig::REQUIRED {
            assert!(c.contains_key(r.name), "{} missing", r.name);
        }
        // The item comes last, so it wins over the fragment's NUMA=y.
        assert!(text.ends_with("# CONFIG_NUMA is not set\n"));
        assert_eq!(c["NUMA"], "n");
    }

    #[test]
    fn differences_name_what_changed() {
        let base = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=64\nCONFIG_D=y\n\
                    CONFIG_GCC_VERSION=120200\n";
        let eff = "CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=128\n# CONFIG_D is not set\nCONFIG_E=m\n\
                   CONFIG_GCC_VERSION=130000\n";
        assert_eq!(differences(base, eff), ["+B", "C=128", "-D", "E=m"]);
        let text = describe(&DEFAULT_BASE, 1, &differences(base, eff), 12);
        assert!(text.contains("4 options differ"), "{text}");
        assert!(text.lines().skip(1).all(|l| l.len() <= 12), "{text}");
    }

    #[test]
    fn an_item_not_taken_is_named() {
        let items = [
            Item::parse("CONFIG_A=y").unwrap(),
            Item::parse("CONFIG_B=n").unwrap(),
            Item::parse("CONFIG_C=y").unwrap(),
        ];
        let eff = parse("CONFIG_A=y\n# CONFIG_C is not set\n");
        let names: Vec<&str> = not_taken(&items, &eff)
            .iter()
            .map(|i| i.name.as_str())
            .collect();
        assert_eq!(names, ["C"]);
    }

    #[test]
    fn a_base_is_a_target_or_a_config_file() {
        assert_eq!(Base::parse("tiny").unwrap(), Base::Target("tinyconfig"));
        assert_eq!(
            Base::parse("defconfig").unwrap(),
            Base::Target("x86_64_defconfig")
        );
        assert!(Base::parse("/nonexistent/config").unwrap_err().is_input());
        assert!(Base::parse("/etc/hostname").unwrap_err().is_input());
    }
}
