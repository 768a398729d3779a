//! stress-ng: the real stress-ng (Debian's package) run under the harness
//! for its VM stressors. Each sample runs `stress-ng --STRESSOR N
//! --timeout T --metrics --yaml FILE` in a private directory; the figure is
//! stress-ng's own bogo-ops/s (real time), which the 0-day robot reports
//! as `stress-ng.STRESSOR.ops_per_sec`, with the child tree's times and
//! faults (wait4 rusage) beside it and the runner's /proc/vmstat deltas.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::cmd_child::{self, Ended};
use super::spec::{Env, Options, Spec, higher, lower, rate};
use super::stored::view_struct;
use super::stressng_output::{self as output, Metrics};
use super::{Case, Measure, SampleData, Workload};
use crate::error::{Error, Result};
use crate::exec::clock;
use crate::workdir::WorkDir;

/// stress-ng in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "stress-ng",
    about: "stress-ng's VM stressors (mmap, madvise, mremap, fault, ...), the real stress-ng",
    examples: "Examples:\n  vmscale run stress-ng --stressor mmap --instances 1,2 --timeout 5\n  \
vmscale run stress-ng --stressor vm --reps 3 -- --vm-bytes 64M\n  \
vmscale run stress-ng --stressor mlockmany --pathological --timeout 3\n\n\
Needs stress-ng (apt-get install stress-ng). The figure ops_per_sec is\n\
stress-ng's bogo-ops/s (real time), the robot's stress-ng.STRESSOR.ops_per_sec.",
    figures: &[
        rate("ops_per_sec", "bogo-ops/s"),
        higher("bogo_ops", "ops"),
        rate("ops_per_cpu_sec", "bogo-ops/s"),
        lower("wall", "s"),
        lower("user", "s"),
        lower("system", "s"),
        lower("minflt", "faults"),
        lower("majflt", "faults"),
    ],
    report: super::Report::StressNg,
    size_flags: "fewer --instances, or a smaller size among the stressor's options",
    quick,
    // Without stress-ng installed, `run quick` says so and goes on.
    quick_may_skip: true,
    ..Spec::of::<Args>()
};

/// `run quick`: the fault stressor, one instance, 1 s a sample.
pub fn quick(_: &crate::machine::Snapshot) -> Vec<Vec<String>> {
    vec![super::spec::args("--stressor fault --timeout 1")]
}

/// Memory stressors of the robot's reports that stress-ng files under a
/// class other than `vm` (which `stress-ng --class vm?` lists).
const ALSO_VM: &[&str] = &["fault", "ksm", "mincore", "remap", "tlb-shootdown"];

/// Stressors stress-ng 0.15 runs only with `--pathological` (it says they
/// may hang the machine; without it, for watchdog, "No stress workers
/// invoked" and exit 1).
const PATHOLOGICAL: &[&str] = &["mlockmany", "watchdog"];

/// The most of stress-ng's yaml file read (a few KiB in practice).
const MAX_YAML: u64 = 1 << 20;

// `vmscale run stress-ng`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The stressor: one of stress-ng's VM stressors (mmap, madvise, mremap,
    /// mlockmany, vm, fault, userfaultfd, ... as the installed version has them)
    #[arg(long)]
    pub stressor: String,
    /// Instances of the stressor (stress-ng's --STRESSOR N): a count or a list
    #[arg(long, default_value = "1", value_delimiter = ',',
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub instances: Vec<u64>,
    /// How long each sample runs stress-ng (its --timeout), in whole seconds
    #[arg(long, default_value = "5s", value_name = "TIME")]
    pub timeout: String,
    /// Let stress-ng run a stressor it calls pathological (mlockmany, watchdog)
    #[arg(long)]
    pub pathological: bool,
    /// The stressor's own options, after -- (e.g. -- --mmap-bytes 16M)
    #[arg(last = true, value_name = "STRESSOR_OPTION")]
    pub options: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub stressor: String,
    pub instances: Vec<usize>,
    /// stress-ng's --timeout, seconds.
    pub timeout_s: u64,
    pub pathological: bool,
    /// The stressor's own options, passed as given.
    pub options: Vec<String>,
    /// The version of the stress-ng that ran, as it says.
    pub version: String,
}

view_struct! {
    /// What the stress-ng report prints of a stored run's configuration.
    pub struct Stored {
        pub stressor: Option<String>,
        pub timeout_s: Option<u64>,
        pub pathological: Option<bool>,
        pub options: Vec<String>,
        pub version: Option<String>,
    }
}

/// The stress-ng on PATH and what it says it has.
struct Installed {
    path: PathBuf,
    version: String,
    /// Every stressor it has (`--stressors`).
    all: Vec<String>,
    /// Its VM stressors: the `vm` class and those of [`ALSO_VM`] it has.
    vm: Vec<String>,
}

impl Installed {
    /// The installed stress-ng; a refusal naming Debian's package without it.
    fn find() -> Result<Installed> {
        let path = crate::setup::need_program("stress-ng", "stress-ng", "vmscale run stress-ng")?;
        let say = |args: &[&str]| -> Result<String> {
            let out = Command::new(&path)
                .args(args)
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| Error::io("cannot run", &path, e))?;
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let version = output::version(&say(&["--version"])?).ok_or_else(|| {
            Error::Refused(format!(
                "{} does not say its version as stress-ng does: install Debian's stress-ng",
                path.display()
            ))
        })?;
        let all: Vec<String> = say(&["--stressors"])?
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let mut vm = output::class_members(&say(&["--class", "vm?"])?);
        vm.extend(
            ALSO_VM
                .iter()
                .filter(|s| all.iter().any(|a| a == *s))
                .map(|s| s.to_string()),
        );
        vm.sort();
        vm.dedup();
        Ok(Installed {
            path,
            version,
            all,
            vm,
        })
    }
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let timeout = crate::parse::duration(&self.timeout).map_err(|e| e.context("--timeout"))?;
        let timeout_s = timeout.as_secs();
        if timeout.subsec_nanos() != 0 || !(1..=3600).contains(&timeout_s) {
            return Err(Error::Input(format!(
                "--timeout {} is not a whole number of seconds from 1 to 3600 \
                 (stress-ng counts whole seconds): write e.g. --timeout 5s",
                self.timeout
            )));
        }
        let installed = Installed::find()?;
        let cfg = Config {
            stressor: self.stressor.clone(),
            instances: self.instances.iter().map(|&n| n as usize).collect(),
            timeout_s,
            pathological: self.pathological,
            options: self.options.clone(),
            version: installed.version.clone(),
        };
        env.made(cfg, |cfg| StressNg::new(cfg, installed))
    }
}

pub struct StressNg {
    cfg: Config,
    binary: PathBuf,
}

impl StressNg {
    fn new(cfg: Config, installed: Installed) -> Result<StressNg> {
        check_stressor(&cfg, &installed)?;
        check_options(&cfg, &installed.all)?;
        Ok(StressNg {
            cfg,
            binary: installed.path,
        })
    }

    /// stress-ng's arguments for one sample of `instances` writing its
    /// files in `dir`.
    fn args(&self, instances: usize, dir: &Path) -> Vec<OsString> {
        let c = &self.cfg;
        let mut a: Vec<OsString> = vec![
            format!("--{}", c.stressor).into(),
            instances.to_string().into(),
            "--timeout".into(),
            c.timeout_s.to_string().into(),
            "--metrics".into(),
            "--yaml".into(),
            dir.join("metrics.yaml").into(),
            "--temp-path".into(),
            dir.into(),
        ];
        if c.pathological {
            a.push("--pathological".into());
        }
        a.extend(c.options.iter().map(OsString::from));
        a
    }

    /// Runs stress-ng once; its metrics for the stressor and the tree's
    /// rusage, or a failure quoting the end of its log.
    fn run_once(&self, instances: usize) -> Result<(Metrics, clock::Usage, f64)> {
        let dir = WorkDir::new("vmscale-stress-ng")?;
        let log_path = dir.path().join("log");
        let log = crate::atomic_file::create_new(0o600)
            .open(&log_path)
            .map_err(|e| Error::io("cannot create", &log_path, e))?;
        let err = log
            .try_clone()
            .map_err(|e| Error::io("cannot reopen", &log_path, e))?;
        let mut c = Command::new(&self.binary);
        c.args(self.args(instances, dir.path()))
            .current_dir(dir.path())
            .stdout(log)
            .stderr(err);
        let t0 = clock::monotonic_ns();
        let ended = cmd_child::spawn_wait(c, "stress-ng", &mut |_| {})?;
        let wall = (clock::monotonic_ns() - t0) as f64 / 1e9;
        let usage = match ended {
            Ended::NotStarted(_, e) => {
                return Err(Error::Failed(format!(
                    "stress-ng ({}) could not be started: {e}",
                    self.binary.display()
                )));
            }
            Ended::Exited(0, usage) => usage,
            Ended::Exited(code, _) => {
                return Err(Error::Failed(format!(
                    "stress-ng exited with status {code}; its last lines:\n{}",
                    tail(&log_path)
                )));
            }
        };
        let yaml = read_capped(&dir.path().join("metrics.yaml")).unwrap_or_default();
        let found = output::metrics(&yaml)
            .into_iter()
            .find(|m| m.stressor == self.cfg.stressor && m.ops_per_sec().is_some());
        let Some(metrics) = found else {
            return Err(Error::Failed(format!(
                "stress-ng wrote no metrics for {}; its last lines:\n{}",
                self.cfg.stressor,
                tail(&log_path)
            )));
        };
        Ok((metrics, usage, wall))
    }
}

/// Refuses a stressor that is not one of the installed stress-ng's VM
/// stressors, listing them, and a pathological one without `--pathological`.
fn check_stressor(cfg: &Config, installed: &Installed) -> Result<()> {
    let name = cfg.stressor.as_str();
    if !installed.vm.iter().any(|s| s == name) {
        let listed = crate::text::fill(&installed.vm.join(" "), 76, "  ", "  ");
        let has = if installed.all.iter().any(|s| s == name) {
            format!("{name} is not one of its VM stressors")
        } else {
            format!("it has no stressor {name}")
        };
        return Err(Error::Input(format!(
            "--stressor {name}: this stress-ng ({}) runs its VM stressors only, and {has}; \
             its VM stressors:\n{listed}",
            installed.version
        )));
    }
    if PATHOLOGICAL.contains(&name) && !cfg.pathological {
        return Err(Error::Input(format!(
            "--stressor {name}: stress-ng runs {name} only with --pathological (it may hang \
             the machine): add --pathological to run it"
        )));
    }
    Ok(())
}

/// The options after -- are the stressor's own (`--STRESSOR-...` and their
/// values): no harness option of stress-ng and no other stressor.
fn check_options(cfg: &Config, stressors: &[String]) -> Result<()> {
    let own = format!("--{}-", cfg.stressor);
    for word in cfg.options.iter().filter(|w| w.starts_with('-')) {
        let name = word[2.min(word.len())..].split('=').next().unwrap_or("");
        if !word.starts_with(&own) || stressors.iter().any(|s| s == name) {
            return Err(Error::Input(format!(
                "`{word}` after -- is not an option of the {s} stressor: only its own \
                 (--{s}-...) go there; vmscale sets --{s}, --timeout, --metrics and --yaml \
                 itself (stress-ng --help lists the {s} options)",
                s = cfg.stressor
            )));
        }
    }
    Ok(())
}

/// Up to [`MAX_YAML`] bytes of a file in our private directory.
fn read_capped(path: &Path) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_YAML)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// The last lines of stress-ng's log, clipped to the terminal's width.
fn tail(log: &Path) -> String {
    let text = read_capped(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(8);
    lines[start..]
        .iter()
        .map(|l| format!("  {}\n", crate::text::clip(l, 78)))
        .collect()
}

impl Measure for StressNg {
    fn cases(&self) -> Vec<Case> {
        Case::grid([self.cfg.stressor.as_str()], &self.cfg.instances)
    }
    /// stress-ng sizes its stressors itself (`-- --vm-bytes` and the like).
    fn memory_need(&self) -> u64 {
        0
    }
    fn sample_s(&self, _case: &Case) -> f64 {
        // stress-ng's start and its stressors' last operation.
        self.cfg.timeout_s as f64 + 0.2
    }
    fn plan_notes(&self) -> Vec<String> {
        let dir = Path::new("DIR");
        let mut words = vec![self.binary.display().to_string()];
        let most = self.cfg.instances.iter().copied().max().unwrap_or(1);
        words.extend(
            self.args(most, dir)
                .iter()
                .map(|a| a.to_string_lossy().into_owned()),
        );
        vec![format!(
            "each sample runs stress-ng {} (N = instances; DIR private): {}",
            self.cfg.version,
            crate::parse::shell_words(&words)
        )]
    }
    fn sample(&self, case: &Case) -> Result<SampleData> {
        let (m, u, wall) = self.run_once(case.tasks)?;
        let mut d = SampleData::default();
        let f = &mut d.figures;
        f.insert("ops_per_sec".into(), m.ops_per_sec().unwrap_or(0.0));
        if let Some(v) = m.bogo_ops() {
            f.insert("bogo_ops".into(), v);
        }
        if let Some(v) = m.ops_per_cpu_sec() {
            f.insert("ops_per_cpu_sec".into(), v);
        }
        f.insert("wall".into(), wall);
        f.insert("user".into(), u.user_ns as f64 / 1e9);
        f.insert("system".into(), u.sys_ns as f64 / 1e9);
        f.insert("minflt".into(), u.minflt as f64);
        f.insert("majflt".into(), u.majflt as f64);
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn installed() -> Installed {
        let all: Vec<String> = ["fault", "mmap", "mlockmany", "vm", "vm-rw", "cpu"]
            .map(String::from)
            .to_vec();
        Installed {
            path: "/usr/bin/stress-ng".into(),
            version: "0.15.06".into(),
            vm: ["fault", "mmap", "mlockmany", "vm", "vm-rw"]
                .map(String::from)
                .to_vec(),
            all,
        }
    }

    fn cfg(stressor: &str, options: &[&str]) -> Config {
        Config {
            stressor: stressor.into(),
            instances: vec![1, 2],
            timeout_s: 3,
            pathological: false,
            options: options.iter().map(|s| s.to_string()).collect(),
            version: "0.15.06".into(),
        }
    }

    fn refusal(r: Result<StressNg>) -> String {
        match r {
            Err(Error::Input(m)) => m,
            Err(e) => panic!("not bad input: {e:?}"),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn an_unknown_or_non_vm_stressor_is_refused_with_the_vm_list() {
        for (name, why) in [
            ("nosuch", "no stressor nosuch"),
            ("cpu", "not one of its VM stressors"),
        ] {
            let m = refusal(StressNg::new(cfg(name, &[]), installed()));
            assert!(m.contains(why), "{m}");
            assert!(m.contains("fault mmap mlockmany vm vm-rw"), "{m}");
        }
    }

    #[test]
    fn a_pathological_stressor_needs_the_flag() {
        let with_watchdog = || {
            let mut i = installed();
            i.vm.push("watchdog".into());
            i.all.push("watchdog".into());
            i
        };
        for name in ["mlockmany", "watchdog"] {
            let m = refusal(StressNg::new(cfg(name, &[]), with_watchdog()));
            assert!(m.contains("--pathological"), "{m}");
            let ok = Config {
                pathological: true,
                ..cfg(name, &[])
            };
            let s = StressNg::new(ok, with_watchdog()).unwrap();
            let args = s.args(2, Path::new("/d"));
            assert!(args.contains(&OsString::from("--pathological")), "{args:?}");
        }
    }

    #[test]
    fn only_the_stressor_s_own_options_pass_after_the_separator() {
        let ok = ["--vm-bytes", "64M", "--vm-method=flip"];
        let s = StressNg::new(cfg("vm", &ok), installed()).unwrap();
        let args = s.args(2, Path::new("/d"));
        let words: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(
            words,
            [
                "--vm",
                "2",
                "--timeout",
                "3",
                "--metrics",
                "--yaml",
                "/d/metrics.yaml",
                "--temp-path",
                "/d",
                "--vm-bytes",
                "64M",
                "--vm-method=flip"
            ]
        );
        // Another stressor (even one whose name starts with vm-), a harness
        // option, the stressor itself, a short option.
        for bad in ["--vm-rw", "--yaml", "--vm", "-t", "--cpu", "--"] {
            let m = refusal(StressNg::new(cfg("vm", &[bad, "1"]), installed()));
            assert!(m.contains(&format!("`{bad}`")), "{m}");
        }
    }
}
