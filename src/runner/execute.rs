//! The repetitions of one run: the cases sampled in turn (1, 2, 1, 2 ...,
//! the order rotated every round, so a slow stretch of the machine lands on
//! every case alike), each case's warm-up first, knob variants of a case
//! interleaved A B A B, until a fixed count or the adaptive rule stops a
//! case (the others go on sampling in turn); every sample stored as soon as
//! it is taken. With several invocations, all cases are sampled so once
//! per invocation.

use std::time::{Duration, Instant};

use super::{Ending, Options, Plan, Progress, Reps, expand_cases, note, sample};
use crate::error::Result;
use crate::exec::signals;
use crate::knobs::Session;
use crate::model::{Case, Sample, Status};
use crate::probes::{Captured, Probes};
use crate::stats::stopping::{self, Rule, Stop};
use crate::store::Store;
use crate::workload::Workload;

/// Runs every case of `workload` per `plan`, storing each sample under
/// `run_id`, with knob variants set through `knobs` before each sample
/// (variants of one case alternate every repetition). A signal ends the
/// run as incomplete; a failed sample ends it with the error.
pub fn execute(
    store: &mut Store,
    run_id: i64,
    workload: &dyn Workload,
    plan: &Plan,
    opts: &Options,
    knobs: Option<&mut Session>,
    progress: &dyn Progress,
) -> Result<Ending> {
    let bases = workload.cases();
    let variants = expand_cases(&bases[..bases.len().min(1)], &opts.combos)
        .len()
        .max(1);
    let invocations = opts.invocations.max(1);
    let mut r = Runner {
        store,
        run_id,
        workload,
        plan,
        opts,
        knobs,
        progress,
        probes: None,
        figures: workload.figures().into_iter().map(|f| f.name).collect(),
        headlines: Vec::new(),
        stops: Vec::new(),
        planned: planned(plan),
        started: Instant::now(),
    };
    let per_case = plan.warmup + r.planned;
    progress.start((invocations * bases.len() * variants * per_case) as u64);
    r.probes = crate::probes::preflight(&opts.probes)?;
    // Each case's next sample number, continued across invocations.
    let mut seqs = vec![0i64; bases.len()];
    for inv in 0..invocations {
        let tag = (invocations > 1).then_some(inv);
        let rule = r.invocation_rule(invocations - inv);
        if let Some(end) = r.invocation(&bases, tag, rule, &mut seqs)? {
            return Ok(end);
        }
    }
    progress.finish();
    Ok(Ending {
        status: Status::Complete,
        note: note::complete(plan, &r.headlines, &r.stops, variants, invocations),
    })
}

/// The work planned per case: the fixed count, or the least an adaptive
/// rule takes (the progress total grows with each sample a case adds).
fn planned(plan: &Plan) -> usize {
    match plan.reps {
        Reps::Fixed(n) => n,
        Reps::Adaptive(r) => r.min_reps.clamp(1, r.max_reps.max(1)),
    }
}

/// The order of round `round` over the `active` cases: rotated by one
/// each round, so every case is as often first as last.
fn rotated(active: &[usize], round: usize) -> Vec<usize> {
    let k = round % active.len().max(1);
    active[k..].iter().chain(&active[..k]).copied().collect()
}

/// What the visits of one run share.
struct Runner<'a> {
    store: &'a mut Store,
    run_id: i64,
    workload: &'a dyn Workload,
    plan: &'a Plan,
    opts: &'a Options,
    knobs: Option<&'a mut Session>,
    progress: &'a dyn Progress,
    probes: Option<Probes>,
    /// The declared figures' names, headline first.
    figures: Vec<String>,
    /// The headline each case reported (pft's populate cases report
    /// pages/wsec, not fault/wsec), for the note.
    headlines: Vec<String>,
    /// Why each adaptive case stopped: its key, the rule, its count.
    stops: Vec<(String, Stop, usize)>,
    planned: usize,
    started: Instant,
}

impl Runner<'_> {
    /// The adaptive rule of the next invocation: the run's time budget
    /// left, shared evenly by the `left` invocations still to run (and, in
    /// one invocation, by all its cases sampled in turn).
    fn invocation_rule(&self, left: usize) -> Option<Rule> {
        match self.plan.reps {
            Reps::Adaptive(r) => Some(Rule {
                max_time: r.max_time.saturating_sub(self.started.elapsed()) / left as u32,
                ..r
            }),
            Reps::Fixed(_) => None,
        }
    }

    /// One invocation: every case's warm-up, then measured rounds of one
    /// sample of each case still sampling (its knob variants side by
    /// side), in rotated order, until the count or the rule stops each.
    /// `Some` ends the run early (interrupted).
    fn invocation(
        &mut self,
        bases: &[Case],
        tag: Option<usize>,
        rule: Option<Rule>,
        seqs: &mut [i64],
    ) -> Result<Option<Ending>> {
        let cases: Vec<Vec<Case>> = bases
            .iter()
            .map(|b| expand_cases(std::slice::from_ref(b), &self.opts.combos))
            .collect();
        let mut values: Vec<Vec<Vec<f64>>> =
            cases.iter().map(|c| vec![Vec::new(); c.len()]).collect();
        let all: Vec<usize> = (0..bases.len()).collect();
        let warming = Instant::now();
        for round in 0..self.plan.warmup {
            for gi in rotated(&all, round) {
                let (base, seq) = (&bases[gi], seqs[gi]);
                if let Some(end) = self.round(base, &cases[gi], seq, true, tag, &mut values[gi])? {
                    return Ok(Some(end));
                }
                seqs[gi] += 1;
            }
        }
        // The budget is the whole run's, warm-ups included (as the plan
        // counts them): the measured samples get what the warm-ups left,
        // and the rule projects from their own time.
        let rule = rule.map(|r| Rule {
            max_time: r.max_time.saturating_sub(warming.elapsed()),
            ..r
        });
        let started = Instant::now();
        let mut active = all;
        let mut round = 0;
        while !active.is_empty() {
            for gi in rotated(&active, round) {
                // Once the budget is spent, a case with its least samples
                // stops before another round of samples, not after it.
                let elapsed = started.elapsed();
                if rule.is_some_and(|r| elapsed >= r.max_time)
                    && self.enough(rule.as_ref(), &cases[gi], tag, &values[gi], elapsed)
                {
                    active.retain(|&a| a != gi);
                    continue;
                }
                let (base, seq) = (&bases[gi], seqs[gi]);
                if let Some(end) = self.round(base, &cases[gi], seq, false, tag, &mut values[gi])? {
                    return Ok(Some(end));
                }
                seqs[gi] += 1;
                let elapsed = started.elapsed();
                if self.enough(rule.as_ref(), &cases[gi], tag, &values[gi], elapsed) {
                    active.retain(|&a| a != gi);
                }
            }
            round += 1;
        }
        Ok(None)
    }

    /// One sample of each variant of `base`, stored; the measured ones'
    /// headlines appended to `values`. `Some` when a signal ended the run.
    fn round(
        &mut self,
        base: &Case,
        cases: &[Case],
        seq: i64,
        warmup: bool,
        tag: Option<usize>,
        values: &mut [Vec<f64>],
    ) -> Result<Option<Ending>> {
        for (ci, case) in cases.iter().enumerate() {
            if let Some(sig) = signals::caught() {
                return Ok(Some(self.interrupted(sig, None)));
            }
            if let Some(k) = self.knobs.as_deref_mut() {
                k.apply(&case.knobs)?;
            }
            if !warmup && values[ci].len() >= self.planned {
                self.progress.grow(1);
            }
            self.progress
                .step(&step_message(self.workload, case, warmup));
            let probe = self.probes.as_mut().filter(|_| !warmup);
            let opts = self.opts;
            let (sample, captured) =
                match sample::take(self.workload, base, seq, warmup, opts, tag, probe) {
                    Ok(s) => s,
                    // Ctrl-C reaches the whole process group: a task or
                    // command killed by it is an interruption, not a failure.
                    Err(e) if signals::caught().is_some() => {
                        let sig = signals::caught().unwrap_or(libc::SIGINT);
                        return Ok(Some(self.interrupted(sig, Some(&e.to_string()))));
                    }
                    Err(e) => return Err(e),
                };
            // A sample a stop signal arrived during is not kept: its tasks
            // may have ended their loops early on it.
            if let Some(sig) = signals::caught() {
                return Ok(Some(self.interrupted(sig, None)));
            }
            if !warmup {
                values[ci].push(self.headline(&sample));
            }
            self.store(case, &sample, &captured)?;
        }
        Ok(None)
    }

    /// The sample's headline: the first declared figure it reports (NaN
    /// for none), noted for the run's note.
    fn headline(&mut self, sample: &Sample) -> f64 {
        let head = self
            .figures
            .iter()
            .find_map(|f| sample.data.figures.get(f).map(|v| (f, *v)));
        if let Some((name, _)) = head
            && !self.headlines.contains(name)
        {
            self.headlines.push(name.clone());
        }
        head.map_or(f64::NAN, |(_, v)| v)
    }

    /// Writes the sample and what was recorded beside it.
    fn store(&mut self, case: &Case, sample: &Sample, captured: &Captured) -> Result<()> {
        let written = self.store.record(
            self.run_id,
            case,
            sample,
            captured.profile.as_ref(),
            captured.locks.as_deref(),
        );
        for line in self.store.take_notices() {
            self.progress.say(&line);
        }
        Ok(written?)
    }

    /// After a measured round: has the case enough samples? A fixed count
    /// when reached; an adaptive rule when it decides, noting why.
    fn enough(
        &mut self,
        rule: Option<&Rule>,
        cases: &[Case],
        tag: Option<usize>,
        values: &[Vec<f64>],
        elapsed: Duration,
    ) -> bool {
        let Some(rule) = rule else {
            let most = match self.plan.reps {
                Reps::Fixed(n) => n,
                Reps::Adaptive(r) => r.max_reps,
            };
            return values[0].len() >= most;
        };
        let Some(decided) = stopping::decide_variants(rule, values, elapsed) else {
            return false;
        };
        for (case, stop) in cases.iter().zip(decided) {
            let key = match tag {
                Some(i) => format!("{} inv {}", case.key(), i + 1),
                None => case.key(),
            };
            self.stops.push((key, stop, values[0].len()));
        }
        true
    }

    /// The run ends incomplete: `sig` was caught, before a sample or
    /// during one (`lost`, the error of the sample under way).
    fn interrupted(&self, sig: i32, lost: Option<&str>) -> Ending {
        self.progress.finish();
        let note = match lost {
            None => format!("interrupted by {}", signals::name(sig)),
            Some(e) => format!(
                "interrupted by {}; the sample under way was lost: {e}",
                signals::name(sig)
            ),
        };
        Ending {
            status: Status::Incomplete,
            note,
        }
    }
}

/// "pft thread tasks=2 thp=always (warm-up)": what the bar shows.
fn step_message(workload: &dyn Workload, case: &Case, warmup: bool) -> String {
    format!(
        "{} {} tasks={}{}{}",
        workload.name(),
        case.variant,
        case.tasks,
        if case.knobs.is_empty() {
            String::new()
        } else {
            format!(" {}", case.knobs_label())
        },
        if warmup { " (warm-up)" } else { "" }
    )
}
