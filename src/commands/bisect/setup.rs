//! What `bisect` and `bisect judge` check before anything boots, and the
//! bench (`bisect::boots::Guests`) they run on: the stored rounds read,
//! the good end built or found, the accelerator chosen, the rule set.

use std::path::Path;

use crate::bisect::args::BisectRun;
use crate::bisect::boots::{Build, Guests};
use crate::bisect::entries::Entry;
use crate::bisect::stored::Stored;
use crate::commands::progress::Bar;
use crate::commands::{Error, Result, output};
use crate::guest::options::{self, BootOptions};
use crate::guest::topology::{Request, Topology};
use crate::guest::{accel, kernel_config, qemu, rounds};
use crate::kbuild::Note;
use crate::kconfig;
use crate::runner::Progress as _;
use crate::stats::decide::Rule;
use crate::store::Store;
use crate::workdir::WorkDir;

/// What both commands check before anything boots, and the bench they
/// run the bisection on.
pub struct Setup {
    steps: Vec<Vec<String>>,
    topology: Topology,
    /// What of the options makes two bisections the same.
    pub key: Vec<String>,
}

impl Setup {
    pub fn of(r: &BisectRun) -> Result<Setup> {
        let steps = crate::commands::guest::split_plan(&r.plan)?;
        if steps.first().is_none_or(|s| s[0] != "run") {
            return Err(Error::Input(
                "give a plan after `--` whose first step runs a workload, e.g. \
                 `vmscale bisect --kernel A --kernel B -- run pft --tasks 1`"
                    .into(),
            ));
        }
        if steps.iter().any(|s| s[0] == "guest") {
            return Err(Error::Input(
                "a bisection's plan boots no guests of its own: give `run` steps".into(),
            ));
        }
        let b = &r.boot;
        if let Some(f) = &b.figure {
            crate::commands::guest::check_figure(f, &steps)?;
        }
        let topology = Request {
            cpus: b.cpus,
            nodes: b.nodes,
            sockets: 1,
            dies: 1,
            threads: 1,
            mem_mib: b.mem_mib,
            ..Request::default()
        }
        .check()?;
        accel::check_shape(b.accel, topology.shape.cpus)?;
        let shape = format!(
            "{} {} {} {:?} {:?}",
            topology.shape.cpus,
            b.nodes,
            options::mem_text(b.mem_mib),
            b.accel,
            b.cpu
        );
        let key = vec![
            r.plan.join(" "),
            b.setup.join("\n"),
            format!("{:?} {:?}", b.figure, b.decide),
            shape,
            b.appended(),
        ];
        Ok(Setup {
            steps,
            topology,
            key,
        })
    }

    /// Checks the given kernels' configs, reads the stored rounds of
    /// `key`, builds or finds the good end, chooses the accelerator and
    /// runs `f` on the bench; gives its result and the deciding figure.
    pub fn run<T>(
        self,
        db: &Path,
        key: &str,
        entries: Vec<Entry>,
        build: Option<Build>,
        b: &BootOptions,
        f: impl FnOnce(&mut Guests, &Rule) -> Result<T>,
    ) -> Result<(T, Option<String>)> {
        let shape = kconfig::Shape {
            cpus: self.topology.shape.cpus,
            nodes: self.topology.shape.nodes,
        };
        for k in entries.iter().filter_map(|e| e.kernel.as_ref()) {
            let checked = kernel_config::check(k, shape)?;
            if let Some(w) = kernel_config::warning(k, &checked) {
                output::warn(&w);
            }
        }
        rounds::check_host_memory(self.topology.shape.mem_mib)?;
        qemu::check_installed()?;
        let stored = match Store::open_existing(db) {
            Ok(s) => Stored::load(&s, key, b.figure.as_deref())?,
            Err(_) if !db.exists() => Stored::default(),
            Err(e) => return Err(e.into()),
        };
        let work = WorkDir::new("vmscale-bisect")?;
        let bar = Bar::new("stages").ticking();
        let quiet = output::quiet();
        // Each step builds its revision apart: its config's differences
        // are shown when they differ from those shown last.
        let mut shown: Option<String> = None;
        let mut on_build = |note: Note| match note {
            Note::Plan(line) if !quiet => bar.say_raw(&format!("kernel build: {line}\n")),
            Note::Config(text) if !quiet && new_text(&mut shown, text) => bar.say_raw(text),
            Note::Warn(text) => output::warn(&text),
            Note::Stage(s) => bar.note(&format!("building: {s}")),
            _ => {}
        };
        let suites = self
            .steps
            .iter()
            .filter(|s| s.len() >= 2 && s[0] == "run" && s[1] == crate::cli::QUICK)
            .count();
        let plan = (self.steps, b.setup.clone());
        let mut bench = Guests::new(
            key.to_string(),
            db,
            entries,
            build,
            plan,
            self.topology,
            work.path(),
            &bar,
            &mut on_build,
        )?;
        let good = bench.kernel(0)?;
        let choice = accel::choose(b.accel, Path::new("/sys"), Path::new("/dev/kvm"), || {
            accel::probe_boot(&good.image, &bench.user, work.path())
        })?;
        if let Some(b) = accel::banner(&choice)
            && !quiet
        {
            eprint!("{}", output::wrap(&b, output::WIDTH));
        }
        let t = b.decide.unwrap_or_else(|| choice.accel.default_threshold());
        let rule = Rule::sequential(t, 0.05, b.max_rounds() as usize);
        bench.choice = Some(choice);
        bench.suites = suites;
        bench.cpu = b.cpu.clone();
        bench.entry = b.entry;
        bench.append = b.appended();
        bench.timeout = b.timeout;
        bench.max_rounds = b.max_rounds() as usize;
        bench.figure = stored.figure.clone();
        bench.stored = stored;
        let out = f(&mut bench, &rule);
        let figure = bench.figure.clone();
        drop(bench);
        bar.finish();
        Ok((out?, figure))
    }
}

/// Whether `text` differs from `last`, which becomes `text`.
fn new_text(last: &mut Option<String>, text: &str) -> bool {
    if last.as_deref() == Some(text) {
        return false;
    }
    *last = Some(text.to_string());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_text_is_shown_again_only_when_it_changed() {
        let mut last = None;
        assert!(new_text(&mut last, "+CONFIG_SMP=y\n"));
        assert!(!new_text(&mut last, "+CONFIG_SMP=y\n"));
        assert!(new_text(&mut last, "+CONFIG_NUMA=y\n"));
        assert!(new_text(&mut last, "+CONFIG_SMP=y\n"));
    }
}
