//! Repetitions: warm-up, samples per case (a fixed count or adaptive
//! stopping), knob variants interleaved A B A B, vmstat deltas and noise
//! accounting around each sample, every sample written to the store as soon
//! as it is taken.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::exec::{clock, signals};
use crate::knobs::Session;
use crate::model::{Case, Sample, Status};
use crate::monitor::{stat, vmstat};
use crate::stats::stopping::{self, Rule, Stop};
use crate::store::Store;
use crate::workload::Workload;

/// How many samples to take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reps {
    /// Exactly this many measured samples per case.
    Fixed(usize),
    /// Until the headline figure's mean is known to the rule's precision.
    Adaptive(Rule),
}

/// Per-sample accounting and knob variants (`execute` uses the defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// A sample is flagged when others used more than this share of the
    /// machine's CPU capacity during it (0.05 = 5 %).
    pub noise_threshold: f64,
    /// Wait up to this long for a quiet machine before each sample.
    pub wait_quiet: Option<Duration>,
    /// Knob values of each variant; empty (or one empty map) for none.
    pub combos: Vec<BTreeMap<String, String>>,
    /// Profile and lock recording beside each measured sample.
    pub probes: crate::probes::Request,
    /// Times every case is visited, each visit with its own warm-up and
    /// samples (counts and limits per visit), its samples tagged with the
    /// visit in `noise["invocation"]` when there is more than one
    /// (docs/repetitions.md, "Invocations").
    pub invocations: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            noise_threshold: 0.05,
            wait_quiet: None,
            combos: Vec::new(),
            probes: crate::probes::Request::default(),
            invocations: 1,
        }
    }
}

/// The cases a run stores: each workload case once per knob combination,
/// combinations adjacent (the order they are sampled and printed).
pub fn expand_cases(cases: &[Case], combos: &[BTreeMap<String, String>]) -> Vec<Case> {
    if combos.iter().all(|c| c.is_empty()) {
        return cases.to_vec();
    }
    cases
        .iter()
        .flat_map(|c| combos.iter().map(|k| c.with_knobs(k.clone())))
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// Warm-up samples taken and stored, but excluded from figures.
    pub warmup: usize,
    pub reps: Reps,
}

/// How the run ended and why.
pub struct Ending {
    pub status: Status,
    pub note: String,
}

/// Receives progress; the command decides whether to draw it.
pub trait Progress {
    fn start(&self, total: u64);
    fn step(&self, message: &str);
    fn finish(&self);
    /// More samples than planned: an adaptive case keeps sampling.
    fn grow(&self, _more: u64) {}
}

/// Runs every case of `workload` per `plan`, storing each sample under `run_id`.
pub fn execute(
    store: &mut Store,
    run_id: i64,
    workload: &dyn Workload,
    plan: &Plan,
    progress: &dyn Progress,
) -> Result<Ending, String> {
    execute_with(
        store,
        run_id,
        workload,
        plan,
        &Options::default(),
        None,
        progress,
    )
}

/// As `execute`, with noise options and knob variants set through `knobs`
/// before each sample (variants of one case alternate every repetition).
pub fn execute_with(
    store: &mut Store,
    run_id: i64,
    workload: &dyn Workload,
    plan: &Plan,
    opts: &Options,
    mut knobs: Option<&mut Session>,
    progress: &dyn Progress,
) -> Result<Ending, String> {
    let bases = workload.cases();
    let combos = &opts.combos;
    let variants = expand_cases(&bases[..bases.len().min(1)], combos)
        .len()
        .max(1);
    // A case's headline is the first declared figure its samples report
    // (pft's populate cases report pages/wsec, not fault/wsec).
    let declared = workload.figures();
    let figures: Vec<String> = declared.iter().map(|f| f.name.clone()).collect();
    let mut headlines: Vec<String> = Vec::new();
    let most = match plan.reps {
        Reps::Fixed(n) => n,
        Reps::Adaptive(r) => r.max_reps,
    };
    // The work planned: fixed counts, or the least an adaptive rule takes;
    // the total grows with each sample an adaptive case adds.
    let planned = match plan.reps {
        Reps::Fixed(n) => n,
        Reps::Adaptive(r) => r.min_reps.clamp(1, r.max_reps.max(1)),
    };
    let invocations = opts.invocations.max(1);
    progress.start((invocations * bases.len() * variants * (plan.warmup + planned)) as u64);
    let started = Instant::now();
    let mut stops: Vec<(String, Stop, usize)> = Vec::new();
    let mut probes = crate::probes::preflight(&opts.probes)?;
    // Each case's next sample number, continued across invocations.
    let mut seqs = vec![0i64; bases.len()];
    for visit in 0..invocations * bases.len() {
        let (inv, gi) = (visit / bases.len(), visit % bases.len());
        let base = &bases[gi];
        let tag = (invocations > 1).then_some(inv);
        let cases = expand_cases(std::slice::from_ref(base), combos);
        // The run's time budget, shared evenly by the visits still to run.
        let rule = match plan.reps {
            Reps::Adaptive(r) => Some(Rule {
                max_time: r.max_time.saturating_sub(started.elapsed())
                    / (invocations * bases.len() - visit) as u32,
                ..r
            }),
            Reps::Fixed(_) => None,
        };
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
        let mut seq = seqs[gi];
        let mut round = 0usize;
        let mut case_started = Instant::now();
        loop {
            let warmup = round < plan.warmup;
            if !warmup && values[0].is_empty() {
                case_started = Instant::now();
            }
            for (ci, case) in cases.iter().enumerate() {
                if let Some(sig) = signals::caught() {
                    progress.finish();
                    return Ok(Ending {
                        status: Status::Incomplete,
                        note: format!("interrupted by {}", signals::name(sig)),
                    });
                }
                if let Some(k) = knobs.as_deref_mut() {
                    k.apply(&case.knobs)?;
                }
                if !warmup && values[ci].len() >= planned {
                    progress.grow(1);
                }
                progress.step(&format!(
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
                ));
                let probe = probes.as_mut().filter(|_| !warmup);
                let (sample, captured) =
                    match take_sample(workload, base, seq, warmup, opts, tag, probe) {
                        Ok(s) => s,
                        // Ctrl-C reaches the whole process group: a task or
                        // command killed by it is an interruption, not a failure.
                        Err(e) if signals::caught().is_some() => {
                            progress.finish();
                            let sig = signals::caught().unwrap_or(libc::SIGINT);
                            return Ok(Ending {
                                status: Status::Incomplete,
                                note: format!(
                                    "interrupted by {}; the sample under way was lost: {e}",
                                    signals::name(sig)
                                ),
                            });
                        }
                        Err(e) => return Err(e),
                    };
                if !warmup {
                    let head = figures
                        .iter()
                        .find_map(|f| sample.data.figures.get(f).map(|v| (f, *v)));
                    if let Some((name, _)) = head
                        && !headlines.contains(name)
                    {
                        headlines.push(name.clone());
                    }
                    values[ci].push(head.map_or(f64::NAN, |(_, v)| v));
                }
                store
                    .add_sample(run_id, case, &sample)
                    .map_err(|e| e.to_string())?;
                if let Some(p) = &captured.profile {
                    store
                        .add_profile(run_id, &case.key(), p)
                        .map_err(|e| e.to_string())?;
                }
                if let Some(rows) = &captured.locks {
                    store
                        .add_locks(run_id, &case.key(), seq, rows)
                        .map_err(|e| e.to_string())?;
                }
            }
            seq += 1;
            round += 1;
            seqs[gi] = seq;
            if warmup {
                continue;
            }
            match &rule {
                None => {
                    if values[0].len() >= most {
                        break;
                    }
                }
                Some(rule) => {
                    let elapsed = case_started.elapsed();
                    if let Some(d) = stopping::decide_variants(rule, &values, elapsed) {
                        for (case, stop) in cases.iter().zip(d) {
                            let key = match tag {
                                Some(i) => format!("{} inv {}", case.key(), i + 1),
                                None => case.key(),
                            };
                            stops.push((key, stop, values[0].len()));
                        }
                        break;
                    }
                }
            }
        }
    }
    progress.finish();
    let mut note = match plan.reps {
        Reps::Fixed(reps) => format!(
            "fixed count: {reps} samples per case after {} warm-up{}",
            plan.warmup,
            if variants > 1 {
                format!("; {variants} knob variants interleaved")
            } else {
                String::new()
            }
        ),
        Reps::Adaptive(rule) => adaptive_note(
            &rule,
            &if headlines.is_empty() {
                "?".to_string()
            } else {
                headlines.join("|")
            },
            &stops,
            plan.warmup,
            variants,
        ),
    };
    if invocations > 1 {
        note.push_str(&format!(
            "; {invocations} invocations (counts and limits per invocation)"
        ));
    }
    Ok(Ending {
        status: Status::Complete,
        note,
    })
}

/// "0.5%" for 0.005.
pub fn percent(fraction: f64) -> String {
    format!("{}%", (fraction * 100.0 * 1e6).round() / 1e6)
}

/// Says which rule stopped the cases: how many by precision (and the sample
/// counts), which could not converge and why (a mixture, a drift), which
/// by max-reps or max-time.
fn adaptive_note(
    rule: &Rule,
    headline: &str,
    stops: &[(String, Stop, usize)],
    warmup: usize,
    variants: usize,
) -> String {
    let n = stops.len();
    let by_precision: Vec<usize> = stops
        .iter()
        .filter(|(_, s, _)| matches!(s, Stop::Precision(_)))
        .map(|(_, _, n)| *n)
        .collect();
    let mut parts = Vec::new();
    if !by_precision.is_empty() {
        let (lo, hi) = (
            by_precision.iter().min().copied().unwrap_or(0),
            by_precision.iter().max().copied().unwrap_or(0),
        );
        parts.push(format!(
            "precision reached in {} of {n} cases (n={}{})",
            by_precision.len(),
            lo,
            if hi > lo {
                format!("..{hi}")
            } else {
                String::new()
            }
        ));
    }
    let paired = stops
        .iter()
        .filter(|(_, s, _)| matches!(s, Stop::Paired(_)))
        .count();
    if paired > 0 {
        parts.push(format!(
            "paired ratio to the first variant within {} in {paired} of {n} cases",
            percent(rule.precision)
        ));
    }
    for (kind, limit) in [
        ("mixture", String::new()),
        ("drift", String::new()),
        ("max-reps", format!(" {}", rule.max_reps)),
        ("max-time", format!(" {:?}", rule.max_time)),
    ] {
        let hit: Vec<String> = stops
            .iter()
            .filter(|(_, s, _)| s.kind() == kind)
            .map(|(k, s, n)| match s.reason() {
                Some(why) => format!("{k} at n={n}: {why}"),
                None => k.clone(),
            })
            .collect();
        if !hit.is_empty() {
            let mut names = hit.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
            if hit.len() > 3 {
                names.push_str(", ...");
            }
            parts.push(format!("{kind}{limit} stopped {} ({names})", hit.len()));
        }
    }
    format!(
        "adaptive, 95% CI of {headline} median within {}: {}; after {warmup} warm-up{}",
        percent(rule.precision),
        parts.join("; "),
        if variants > 1 {
            format!("; {variants} knob variants interleaved")
        } else {
            String::new()
        }
    )
}

/// CPU time of this process and its waited-for children, in seconds.
fn own_cpu_s() -> f64 {
    let (p, c) = (
        clock::usage(clock::Who::Process),
        clock::usage(clock::Who::Children),
    );
    (p.user_ns + p.sys_ns + c.user_ns + c.sys_ns) as f64 / 1e9
}

fn take_sample(
    workload: &dyn Workload,
    case: &Case,
    seq: i64,
    warmup: bool,
    opts: &Options,
    invocation: Option<usize>,
    probes: Option<&mut crate::probes::Probes>,
) -> Result<(Sample, crate::probes::Captured), String> {
    let root = Path::new("/");
    let mut noise = BTreeMap::new();
    if let Some(i) = invocation {
        noise.insert(crate::stats::levels::INVOCATION.to_string(), i as f64);
    }
    if let Some(limit) = opts.wait_quiet {
        let (waited, quiet) = stat::wait_quiet(
            root,
            opts.noise_threshold,
            Duration::from_millis(200),
            limit,
        );
        noise.insert("quiet_wait_s".to_string(), waited.as_secs_f64());
        noise.insert("quiet".to_string(), if quiet { 1.0 } else { 0.0 });
    }
    let before = vmstat::read_live();
    let cpu0 = stat::read(root);
    let own0 = own_cpu_s();
    let active = probes.as_ref().map(|p| p.start()).transpose()?;
    let t0 = Instant::now();
    let data = workload.sample(case).map_err(|e| {
        format!(
            "{} {} with {} tasks: {e}",
            workload.name(),
            case.variant,
            case.tasks
        )
    })?;
    let wall = t0.elapsed().as_secs_f64();
    let own = own_cpu_s() - own0;
    let cpu1 = stat::read(root);
    let after = vmstat::read_live();
    let captured = match (probes, active) {
        (Some(p), Some(a)) => p.finish(a)?,
        _ => crate::probes::Captured::default(),
    };
    let mut flagged = false;
    if let (Some(a), Some(b)) = (cpu0, cpu1) {
        let n = stat::noise(&a, &b, own, wall, clock::ticks_per_second());
        flagged = n.flagged(opts.noise_threshold);
        noise.extend(n.to_map());
    }
    let sample = Sample {
        seq,
        warmup,
        taken_at: crate::timefmt::now(),
        data,
        vmstat: vmstat::delta(&before, &after),
        noise,
        flagged,
    };
    Ok((sample, captured))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_why_cases_stopped_early() {
        let rule = Rule {
            precision: 0.01,
            min_reps: 3,
            max_reps: 30,
            max_time: Duration::from_secs(60),
        };
        let stops = [
            ("fault/1".to_string(), Stop::Precision(0.008), 12),
            (
                "fault/2".to_string(),
                Stop::Mixture {
                    low_n: 4,
                    low: 290_123.4,
                    high_n: 6,
                    high: 620_456.7,
                },
                10,
            ),
            (
                "fault/4".to_string(),
                Stop::Drift {
                    per_sample: 0.0085,
                    p: 2.1e-4,
                },
                14,
            ),
        ];
        let note = adaptive_note(&rule, "fault/wsec", &stops, 1, 1);
        assert_eq!(
            note,
            "adaptive, 95% CI of fault/wsec median within 1%: precision reached in 1 of \
             3 cases (n=12); mixture stopped 1 (fault/2 at n=10: 4 near 290123, 6 near \
             620457); drift stopped 1 (fault/4 at n=14: +0.85%/sample, p=2.1e-4); after \
             1 warm-up"
        );
    }
}
