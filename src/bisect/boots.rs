//! The bench of a real bisection: a pair of entries booted in turn, round
//! by round, through the guest's rounds (`guest::rounds::boot_all`), each
//! boot's value of the deciding figure read as `--rounds auto` reads it,
//! and the rounds pooled and merged into the store under the bisection's
//! labels and session (`stored`), so an interrupted bisection finds them.
//! A revision's kernel is built (or found in the build cache) when a step
//! first asks for it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::entries::Entry;
use super::flow::{Bench, Enough, Measured, Pair};
use super::stored::{self, Stored};
use crate::error::{Error, Result};
use crate::guest::accel::Choice;
use crate::guest::boot::Prepared;
use crate::guest::host_load::Busy;
use crate::guest::initramfs::{Userland, step_programs};
use crate::guest::kernel::Kernel;
use crate::guest::modules::room_needed;
use crate::guest::pool::{self, Round};
use crate::guest::rounds;
use crate::guest::topology::Topology;
use crate::kbuild::Note;
use crate::runner::Progress;

/// Where revisions come from.
pub struct Build {
    pub tree: PathBuf,
    pub config: String,
    pub items: Vec<String>,
}

/// What every boot of the bisection shares.
pub struct Guests<'a> {
    pub key: String,
    pub db: PathBuf,
    pub entries: Vec<Entry>,
    pub build: Option<Build>,
    pub steps: Vec<Vec<String>>,
    /// How many of the steps run the quick suite (their bound is longer).
    pub suites: usize,
    pub setup: Vec<String>,
    pub topology: Topology,
    pub cpu: Option<String>,
    /// Where each kernel is entered (`--entry`).
    pub entry: crate::guest::options::Entry,
    pub append: String,
    pub timeout: Option<Duration>,
    pub max_rounds: usize,
    pub figure: Option<String>,
    pub stored: Stored,
    pub work: PathBuf,
    pub user: Userland,
    pub choice: Option<Choice>,
    pub bar: &'a dyn Progress,
    pub on_build: &'a mut dyn FnMut(Note),
    prepared: Vec<Option<Prepared>>,
    measured: usize,
}

impl<'a> Guests<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        key: String,
        db: &Path,
        entries: Vec<Entry>,
        build: Option<Build>,
        (steps, setup): (Vec<Vec<String>>, Vec<String>),
        topology: Topology,
        work: &Path,
        bar: &'a dyn Progress,
        on_build: &'a mut dyn FnMut(Note),
    ) -> Result<Guests<'a>> {
        let room = room_needed(&steps, &setup, false);
        let user = Userland::prepare(work, room, step_programs(&steps)?)?;
        let n = entries.len();
        Ok(Guests {
            key,
            db: db.to_path_buf(),
            entries,
            build,
            steps,
            suites: 0,
            setup,
            topology,
            cpu: None,
            entry: crate::guest::options::Entry::Auto,
            append: String::new(),
            timeout: None,
            max_rounds: 30,
            figure: None,
            stored: Stored::default(),
            work: work.to_path_buf(),
            user,
            choice: None,
            bar,
            on_build,
            prepared: (0..n).map(|_| None).collect(),
            measured: 0,
        })
    }

    /// Entry `i`'s kernel: given, or built from its revision.
    pub fn kernel(&mut self, i: usize) -> Result<Kernel> {
        if let Some(k) = &self.entries[i].kernel {
            return Ok(k.clone());
        }
        let Some(b) = &self.build else {
            return Err(Error::Failed(format!(
                "{}: no kernel",
                self.entries[i].name
            )));
        };
        let name = self.entries[i].name.clone();
        let shape = crate::kconfig::Shape {
            cpus: self.topology.shape.cpus,
            nodes: self.topology.shape.nodes + self.topology.shape.memory_only_nodes,
        };
        let built = crate::guest::tree::kernels(
            &b.tree,
            std::slice::from_ref(&name),
            (&b.config, &b.items),
            shape,
            self.on_build,
        )?;
        let k = built
            .into_iter()
            .next()
            .map(|t| t.kernel)
            .ok_or_else(|| Error::Failed(format!("{name}: nothing built")))?;
        self.entries[i].kernel = Some(k.clone());
        Ok(k)
    }

    /// Entry `i` ready to boot (its initramfs written once).
    fn prepared(&mut self, i: usize) -> Result<Prepared> {
        if self.prepared[i].is_none() {
            let k = self.kernel(i)?;
            let dir = self.work.join(format!("entry-{i}"));
            std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
            let label = stored::label(&self.key, &self.entries[i].label);
            let mut p = rounds::prepare(
                vec![k],
                &[label],
                &[],
                &rounds::Plan {
                    steps: &self.steps,
                    setup: &self.setup,
                    nested: None,
                },
                &self.user,
                &dir,
            )?;
            if self
                .choice
                .as_ref()
                .is_some_and(|c| self.entry.pvh(c.accel))
            {
                crate::guest::boot::enter_at_pvh(&mut p)?;
            }
            self.prepared[i] = p.into_iter().next();
        }
        let p = self.prepared[i]
            .as_ref()
            .ok_or_else(|| Error::Failed("no prepared kernel".into()))?;
        Ok(Prepared {
            kernel: p.kernel.clone(),
            label: p.label.clone(),
            initrd: p.initrd.clone(),
            bus: p.bus,
            append: p.append.clone(),
            pvh: p.pvh.clone(),
        })
    }
}

impl Bench for Guests<'_> {
    fn measure(&mut self, pair: Pair, enough: Enough) -> Result<Measured> {
        let Pair { role, base, new } = pair;
        let (lb, ln) = (&self.entries[base].label, &self.entries[new].label);
        let mut logs = self.stored.logs(role, lb, ln);
        let stored = logs.len();
        if enough(&logs) {
            return Ok(Measured {
                logs,
                stored,
                seconds: 0.0,
                host: None,
            });
        }
        let pair = [self.prepared(base)?, self.prepared(new)?];
        let choice = self
            .choice
            .as_ref()
            .ok_or_else(|| Error::Failed("no accelerator chosen".into()))?;
        let plan = (self.steps.len(), self.suites);
        let mut session = rounds::session(
            &self.topology,
            choice,
            self.cpu.as_deref(),
            &self.append,
            self.timeout,
            plan,
        );
        session.info.session = Some(stored::session(&self.key, role));
        self.measured += 1;
        let files = self.work.join(format!("pair-{}", self.measured));
        let more = self.max_rounds.saturating_sub(logs.len()).max(1) as u32;
        let started = Instant::now();
        let figure = &mut self.figure;
        let mut stop = |round: u32, done: &[Vec<Round>]| -> Result<bool> {
            let mut v = Vec::new();
            for k in done {
                let Some(r) = k.iter().find(|r| r.round == round) else {
                    return Ok(false);
                };
                match crate::guest::decide::round_value(&r.store, figure.as_deref())? {
                    Some(x) => {
                        figure.get_or_insert(x.figure);
                        v.push(x.value);
                    }
                    None => {
                        return Err(Error::Failed(
                            "the plan stored no run with the deciding figure: a bisection's \
                             plan starts with `run WORKLOAD`"
                                .into(),
                        ));
                    }
                }
            }
            if let [a, b] = v[..] {
                logs.push((b / a).ln());
            }
            Ok(enough(&logs))
        };
        let (done, failure) = rounds::boot_all(
            &session,
            &pair,
            (more, self.steps.len()),
            &files,
            self.bar,
            &mut stop,
        );
        let host = Busy::of(done.iter().flatten().filter_map(|r| r.host_other_share));
        let merged = pool::pool_and_merge(&self.db, &pair, &done, &files, false);
        let _ = std::fs::remove_dir_all(&files);
        merged?;
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(Measured {
            logs,
            stored,
            seconds: started.elapsed().as_secs_f64(),
            host,
        })
    }
}
