//! One run's lifecycle, owned in one place: the store row, the signal
//! handlers, the machine-wide knob lock and knob session (with its crash
//! journal), the repetitions, the knobs restored and the run finished, or
//! discarded when it failed before its first sample. The command validates
//! the options; the session does the rest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Options, Plan, Progress, execute, expand_cases};
use crate::error::{Error, Result};
use crate::exec::signals;
use crate::knobs;
use crate::machine::Snapshot;
use crate::model::{Run, Status};
use crate::store::{NewRun, Store};
use crate::workload::Workload;

/// A validated run, ready to start.
pub struct Setup<'a> {
    pub workload: &'a dyn Workload,
    pub plan: Plan,
    pub options: Options,
    pub label: Option<&'a str>,
    /// The command line stored with the run.
    pub command_line: String,
    pub machine: &'a Snapshot,
    pub knobs: KnobSetup,
}

/// The knobs a run sets: the user's variants and `--tune`'s values.
pub struct KnobSetup {
    /// Every knob set (`--knob`'s, then `--tune`'s one-value knobs).
    pub plan: knobs::Plan,
    /// The values `--tune` set, applied once at the start.
    pub tuned: BTreeMap<String, String>,
    pub root: PathBuf,
    pub journal: PathBuf,
    /// Refuse instead of waiting when another run holds the knob lock.
    pub no_wait: bool,
}

impl KnobSetup {
    /// No knob set: no lock taken, no journal written.
    pub fn none() -> KnobSetup {
        KnobSetup {
            plan: knobs::Plan::default(),
            tuned: BTreeMap::new(),
            root: knobs::live_root(),
            journal: knobs::journal::default_path(),
            no_wait: false,
        }
    }
}

/// A run under way: its row in the store, its knobs set. Dropped without
/// `run`, the knobs are restored (by the knob session) and the row is
/// discarded, or marked failed if it holds samples.
pub struct Session<'a> {
    setup: Setup<'a>,
    store: Store,
    id: i64,
    knobs: Option<knobs::Session>,
    finished: bool,
}

impl<'a> Session<'a> {
    /// Opens the store, installs the signal handlers, takes the knob lock
    /// and sets `--tune`'s values, then stores the run's row.
    pub fn begin(db: &Path, setup: Setup<'a>) -> Result<Session<'a>> {
        // The store path is input: a file that is not a store is refused
        // before any knob is touched.
        let mut store = Store::open(db)?;
        // What an earlier run left in a spool goes in first.
        for line in store.merge_left_spools() {
            eprintln!("vmscale: {line}");
        }
        // Handlers first: from here a SIGINT only sets the flag, so the
        // knobs are restored by the session rather than left changed.
        signals::install();
        let mut knobs = begin_knobs(&setup.knobs)?;
        if let Some(k) = knobs.as_mut() {
            k.apply(&setup.knobs.tuned)?;
        }
        let knobs_json = knobs
            .as_ref()
            .map(|k| describe_knobs(&setup.knobs, &k.originals()))
            .unwrap_or_else(|| serde_json::json!({}));
        let w = setup.workload;
        let id = store.create_run(&NewRun {
            label: setup.label,
            workload: w.name(),
            command_line: &setup.command_line,
            config: &w.config(),
            figures: &w.figures(),
            machine: &serde_json::to_value(setup.machine).unwrap_or_default(),
            knobs: &knobs_json,
            cases: &expand_cases(&w.cases(), &setup.options.combos),
            origin: "measured",
        })?;
        Ok(Session {
            setup,
            store,
            id,
            knobs,
            finished: false,
        })
    }

    /// The stored run's id.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// Takes every sample, restores the knobs and finishes the run;
    /// returns it as stored. A failed run is an error (`Error::Failed`),
    /// stored as failed, or not at all when it failed before its first
    /// sample.
    pub fn run(mut self, progress: &dyn Progress) -> Result<Run> {
        let s = &self.setup;
        let outcome = execute(
            &mut self.store,
            self.id,
            s.workload,
            &s.plan,
            &s.options,
            self.knobs.as_mut(),
            progress,
        );
        let (mut status, mut note, mut error) = match outcome {
            Ok(end) => (end.status, end.note, None),
            // The store's disk failed: the samples stored are the run.
            Err(e) if self.store.stopped().is_some() => {
                (Status::Incomplete, e.to_string(), Some(e))
            }
            Err(e) => (Status::Failed, e.to_string(), Some(e)),
        };
        if let Err(e) = self.restore_knobs(&mut note) {
            status = Status::Failed;
            error.get_or_insert(e);
        }
        let run = self.finish(status, &note, error);
        for line in self.store.take_notices() {
            progress.say(&line);
        }
        run
    }

    /// Restores the knobs, saying so in `note`.
    fn restore_knobs(&mut self, note: &mut String) -> Result<()> {
        let Some(k) = self.knobs.as_mut() else {
            return Ok(());
        };
        match k.restore() {
            Ok(()) => {
                let was: Vec<String> = k
                    .originals()
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                note.push_str(&tuned_note(&self.setup.knobs.tuned));
                note.push_str(&format!("; knobs restored to {}", was.join(", ")));
                Ok(())
            }
            Err(e) => {
                note.push_str(&format!("; knobs NOT restored: {e}"));
                Err(e)
            }
        }
    }

    /// Ends the run's row: discarded when it failed before its first
    /// sample, else marked with `status` and `note` and read back.
    fn finish(&mut self, status: Status, note: &str, error: Option<Error>) -> Result<Run> {
        self.finished = true;
        let id = self.id;
        if let Some(e) = &error
            && self.store.discard_if_empty(id).unwrap_or(false)
        {
            return Err(Error::Failed(format!("{e}; nothing stored")));
        }
        let finished = self.store.finish_run(id, status, Some(note));
        if let Some(why) = self.store.stopped() {
            // Marked incomplete if the store still takes that much, else
            // shown incomplete (its process gone) and marked later.
            return Err(Error::Failed(format!("run {id}: {why}")));
        }
        finished?;
        let run = self.store.load(id)?;
        match error {
            Some(e) => Err(Error::Failed(format!("run {id} failed: {e}"))),
            None => Ok(run),
        }
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Begun but never run (a bug, or a panic): leave no row "running".
        let id = self.id;
        if !self.store.discard_if_empty(id).unwrap_or(false) {
            let note = "ended before all its samples were taken";
            if let Err(e) = self.store.finish_run(id, Status::Failed, Some(note)) {
                eprintln!("vmscale: run {id}: {e}");
            }
        }
    }
}

/// Takes the machine-wide knob lock (waiting, or refusing with `no_wait`)
/// and starts the knob session; none when no knob is set.
fn begin_knobs(k: &KnobSetup) -> Result<Option<knobs::Session>> {
    use crate::knobs::lock::{KnobLock, Wait};
    if k.plan.is_empty() {
        return Ok(None);
    }
    let wait = if k.no_wait { Wait::No } else { Wait::Yes };
    let lock = KnobLock::acquire(wait).map_err(|e| match signals::caught() {
        Some(_) => Error::Exit(130, e.to_string()),
        None => e,
    })?;
    knobs::Session::begin(&k.plan, &k.root, &k.journal, Some(lock)).map(Some)
}

/// The run's stored knobs: `--knob`'s originals and variants, plus what
/// `--tune` set.
fn describe_knobs(k: &KnobSetup, originals: &BTreeMap<String, String>) -> serde_json::Value {
    let mut v = k.plan.describe(originals);
    if !k.tuned.is_empty() {
        v["tuned"] = serde_json::json!(k.tuned);
    }
    v
}

/// "; --tune set k=v,..." for the run's note, or nothing.
fn tuned_note(tuned: &BTreeMap<String, String>) -> String {
    if tuned.is_empty() {
        return String::new();
    }
    let kv: Vec<String> = tuned.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("; --tune set {}", kv.join(", "))
}
