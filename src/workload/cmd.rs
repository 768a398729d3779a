//! cmd (seeds 001, 003, 004): any external command as a workload. Each
//! sample runs an optional setup command, the command itself, then an
//! optional cleanup command. Figures are the whole command tree's wall,
//! user and system time and faults (wait4 rusage), and /proc/diskstats
//! deltas for a named device with iostat-like figures, the mean over the
//! sample and the worst of the per-interval values.

use super::spec::lower;
use super::stored::lenient;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use super::cmd_child::{self, Ended};
use super::{Case, Measure, SampleData, Workload};
use crate::exec::clock;
use crate::machine::Snapshot;
use crate::monitor::diskstats;

use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};

/// cmd in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "cmd",
    about: "Any external command under the harness: times, faults, vmstat and disk deltas",
    examples: "Examples:\n  vmscale run cmd -- make -C /tmp/tree -j2\n  \
vmscale run cmd --device vda --setup 'make -C /tmp/tree clean' -- make -C /tmp/tree -j2\n  \
vmscale run cmd --reps 3 -- sh -c 'xfs_repair -n /dev/sdb1'\n\n\
Exit code: when the command (or --setup/--cleanup) exits with N, vmscale stores the run as\n\
failed and exits with N; killed by signal S gives 128+S; not found 127, not executable 126.",
    figures: &[
        lower("wall", "s"),
        lower("user", "s"),
        lower("system", "s"),
        lower("minflt", "faults"),
        lower("majflt", "faults"),
    ],
    report: super::Report::Cmd,
    // memory_need is 0: a command is never refused for memory.
    size_flags: "a command that needs less memory",
    quick,
    ..Spec::of::<Args>()
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub argv: Vec<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    pub device: Option<String>,
    /// Seconds between diskstats readings while the command runs.
    pub interval: f64,
}

/// What the cmd report prints of a stored run's configuration: fields of
/// runs stored by older versions may be missing.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Stored {
    /// The command's words (any that are not text left out).
    #[serde(deserialize_with = "words")]
    pub argv: Vec<String>,
    /// The block device whose I/O was counted.
    #[serde(deserialize_with = "lenient")]
    pub device: Option<String>,
    /// `--setup` when given (absent or null: none).
    #[serde(deserialize_with = "lenient")]
    pub setup: Option<serde::de::IgnoredAny>,
}

fn words<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::Array(a) => a
            .into_iter()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    })
}

pub struct Cmd {
    cfg: Config,
    /// The exit code vmscale should leave with after a failed sample.
    exit: Mutex<Option<i32>>,
}

impl Cmd {
    pub fn new(cfg: Config) -> Result<Cmd> {
        if cfg.argv.is_empty() {
            return Err(Error::Input(
                "give the command after --, e.g. vmscale run cmd -- make -j2".into(),
            ));
        }
        if let Some(dev) = &cfg.device
            && diskstats::read_device(Path::new("/"), dev).is_none()
        {
            return Err(Error::Input(format!(
                "--device {dev} is not in /proc/diskstats; devices: {}",
                diskstats::devices(Path::new("/")).join(" ")
            )));
        }
        crate::limits::in_range("--interval", cfg.interval, 0.05, 3600.0)?;
        Ok(Cmd {
            cfg,
            exit: Mutex::new(None),
        })
    }

    fn failed(&self, code: i32, msg: String) -> Error {
        if let Ok(mut g) = self.exit.lock() {
            *g = Some(code);
        }
        Error::Failed(msg)
    }

    fn shell(&self, what: &str, script: &str) -> Result<()> {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        let (status, _) = self.spawn_wait(c, what, &mut |_| {})?;
        match status {
            0 => Ok(()),
            code => Err(self.failed(code, format!("{what} `{script}` exited with status {code}"))),
        }
    }

    /// Runs `c` with its stdout sent to our stderr (so tables stay clean):
    /// its exit code (128+N for signal N) and its tree's rusage.
    fn spawn_wait(
        &self,
        mut c: Command,
        what: &str,
        tick: &mut dyn FnMut(u64),
    ) -> Result<(i32, clock::Usage)> {
        if let Ok(fd) = std::os::fd::AsFd::as_fd(&std::io::stderr()).try_clone_to_owned() {
            c.stdout(Stdio::from(fd));
        }
        match cmd_child::spawn_wait(c, what, tick)? {
            Ended::Exited(code, usage) => Ok((code, usage)),
            Ended::NotStarted(code, e) => {
                Err(self.failed(code, format!("{what} could not be started: {e}")))
            }
        }
    }
}

/// `run quick`: a short CPU-bound shell pipeline.
pub fn quick(_: &Snapshot) -> Vec<Vec<String>> {
    vec![
        ["--", "sh", "-c", "seq 200000 >/dev/null"]
            .map(str::to_string)
            .to_vec(),
    ]
}

// `vmscale run cmd`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// A block device from /proc/diskstats to report (e.g. vda, sdb)
    #[arg(long)]
    pub device: Option<String>,
    /// Shell command run before each sample (not timed)
    #[arg(long)]
    pub setup: Option<String>,
    /// Shell command run after each sample (not timed), even after a failure
    #[arg(long)]
    pub cleanup: Option<String>,
    /// Seconds between diskstats readings (for the Max figures)
    #[arg(long, default_value_t = 1.0)]
    pub interval: f64,
    /// The command and its arguments, after --
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let cfg = Config {
            argv: self.command.clone(),
            setup: self.setup.clone(),
            cleanup: self.cleanup.clone(),
            device: self.device.clone(),
            interval: self.interval,
        };
        env.made(cfg, Cmd::new)
    }
}

impl Measure for Cmd {
    fn sample_s(&self, _case: &Case) -> f64 {
        super::cost::UNKNOWN_S
    }

    /// After a failed run: the exit code to propagate (see docs/cmd.md).
    fn exit_code(&self) -> Option<i32> {
        self.exit.lock().ok().and_then(|g| *g)
    }
    fn cases(&self) -> Vec<Case> {
        vec![Case::new(1, "cmd")]
    }
    fn memory_need(&self) -> u64 {
        0
    }
    fn sample(&self, _case: &Case) -> Result<SampleData> {
        if let Some(s) = &self.cfg.setup {
            self.shell("setup", s)?;
        }
        let result = self.measure();
        if let Some(s) = &self.cfg.cleanup {
            let cleaned = self.shell("cleanup", s);
            if result.is_ok() {
                cleaned?;
            }
        }
        result
    }
}

impl Cmd {
    fn measure(&self) -> Result<SampleData> {
        let root = Path::new("/");
        let dev = self.cfg.device.clone();
        let read = || dev.as_deref().and_then(|d| diskstats::read_device(root, d));
        let first = read();
        let mut last = (clock::monotonic_ns(), first);
        let mut worst: BTreeMap<String, f64> = BTreeMap::new();
        let every = (self.cfg.interval * 1e9) as u64;
        let mut tick = |now: u64| {
            if dev.is_none() || now < last.0 + every {
                return;
            }
            let cur = read();
            if let (Some(a), Some(b)) = (&last.1, &cur) {
                for (k, v) in diskstats::figures(a, b, (now - last.0) as f64 / 1e9) {
                    let w = worst.entry(k).or_insert(0.0);
                    *w = w.max(v);
                }
            }
            last = (now, cur);
        };
        let mut c = Command::new(&self.cfg.argv[0]);
        c.args(&self.cfg.argv[1..]);
        let t0 = clock::monotonic_ns();
        let (code, u) = self.spawn_wait(c, "the command", &mut tick)?;
        let t1 = clock::monotonic_ns();
        if code != 0 {
            return Err(self.failed(
                code,
                format!(
                    "the command exited with status {code}{}: {}",
                    if code > 128 {
                        " (killed by a signal)"
                    } else {
                        ""
                    },
                    crate::parse::shell_words(&self.cfg.argv)
                ),
            ));
        }
        let mut d = SampleData::default();
        let f = &mut d.figures;
        f.insert("wall".into(), (t1 - t0) as f64 / 1e9);
        f.insert("user".into(), u.user_ns as f64 / 1e9);
        f.insert("system".into(), u.sys_ns as f64 / 1e9);
        f.insert("minflt".into(), u.minflt as f64);
        f.insert("majflt".into(), u.majflt as f64);
        if let (Some(a), Some(b)) = (first, read()) {
            for (k, v) in diskstats::figures(&a, &b, (t1 - t0) as f64 / 1e9) {
                f.insert(format!("disk/{k}"), v);
            }
            for (k, v) in worst {
                f.insert(format!("disk_max/{k}"), v);
            }
        }
        Ok(d)
    }
}
