//! One kernel's rounds pooled: the runs each boot stored for the same plan
//! step become one run, case by case, every sample tagged with its round
//! (noise `guest_round`) and with the round as its invocation, so `show`
//! reports the between-boot variance as it reports `--invocations`, and
//! `compare` pairs kernels round by round. The pooled runs are written to
//! a store of their own and only then merged, one transaction per run,
//! so the host store never holds half of one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::boot::Prepared;
use super::files;
use crate::error::Result;
use crate::model::{Case, Run, Status};
use crate::stats::levels::INVOCATION;
use crate::store::merge::Merged;
use crate::store::{NewRun, Store};

/// The noise key holding the round a sample's boot was in.
pub use crate::model::GUEST_ROUND;

use super::host_load::HOST_OTHER_SHARE;

/// One completed boot of a kernel: its round and the store it brought.
#[derive(Debug, Clone)]
pub struct Round {
    pub round: u32,
    pub store: PathBuf,
    /// The boot's wall seconds by the host's clock, QEMU started to
    /// stopped (a round's lost first boot and its second together).
    pub seconds: f64,
    /// The host's CPU share others used meanwhile (`host_load`), kept
    /// with each of the boot's samples; None where unread.
    pub host_other_share: Option<f64>,
}

/// A pooled run: the plan step it is, and its id in the pooled store.
#[derive(Debug, Clone, PartialEq)]
pub struct Pooled {
    pub step: String,
    pub id: i64,
}

/// Each kernel's pooled runs and the store that holds them.
pub struct Landed {
    /// The host store, or the pooled store when nothing was merged.
    pub store: PathBuf,
    /// Per kernel, in `--kernel` order.
    pub runs: Vec<Vec<Pooled>>,
}

/// Pools each kernel's completed rounds into `dir`/pooled.db and merges
/// that into the store at `db` (unless `no_merge` or nothing was pooled),
/// with the pooled runs' ids turned into the host store's.
pub fn pool_and_merge(
    db: &Path,
    prepared: &[Prepared],
    done: &[Vec<Round>],
    dir: &Path,
    no_merge: bool,
) -> Result<Landed> {
    let pooled_path = dir.join(files::POOLED);
    let _ = std::fs::remove_file(&pooled_path);
    let mut pooled = Store::open(&pooled_path)?;
    if !no_merge {
        // Scratch, merged into the host store at once (which syncs): no
        // fsyncs of its own (they cost a boot some 10-40 ms here).
        pooled.batch("PRAGMA synchronous = OFF")?;
    }
    let mut runs = Vec::new();
    for (p, rounds) in prepared.iter().zip(done) {
        runs.push(if rounds.is_empty() {
            Vec::new()
        } else {
            pool(&p.label, rounds, &mut pooled)?
        });
    }
    if no_merge || runs.iter().all(Vec::is_empty) {
        return Ok(Landed {
            store: pooled_path,
            runs,
        });
    }
    let copied = Store::open(db)?.merge_from(&pooled)?;
    for r in runs.iter_mut().flatten() {
        r.id = Merged::moved(&copied, r.id).unwrap_or(r.id);
    }
    Ok(Landed {
        store: db.to_path_buf(),
        runs,
    })
}

/// What matches a run across rounds: workload, command line, label, and
/// which occurrence of those it is in its store.
fn step_keys(runs: &[Run]) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    runs.iter()
        .map(|r| {
            let base = format!(
                "{}\u{1f}{}\u{1f}{}",
                r.meta.workload,
                r.meta.command_line,
                r.meta.label.as_deref().unwrap_or("")
            );
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            format!("{base}\u{1f}{n}")
        })
        .collect()
}

fn load_all(path: &Path) -> Result<Vec<Run>> {
    let s = Store::open_existing(path)?;
    let mut runs = Vec::new();
    for r in s.list()? {
        runs.push(s.load(r.id)?);
    }
    Ok(runs)
}

/// The label of a pooled run: the kernel's, with the step's own label or
/// workload after a `/` when the plan stores more than one run; an empty
/// kernel label keeps the step's own label (bench/numa-vm.sh).
pub fn pooled_label(kernel: &str, run: &Run, several: bool) -> Option<String> {
    if kernel.is_empty() {
        return run.meta.label.clone();
    }
    Some(match (&run.meta.label, several) {
        (Some(l), _) => format!("{kernel}/{l}"),
        (None, true) => format!("{kernel}/{}", run.meta.workload),
        (None, false) => kernel.to_string(),
    })
}

/// Pools `rounds` of the kernel labelled `kernel` into `into`.
pub fn pool(kernel: &str, rounds: &[Round], into: &mut Store) -> Result<Vec<Pooled>> {
    let mut per_round: Vec<(u32, Vec<(String, Run)>)> = Vec::new();
    for r in rounds {
        let mut runs = load_all(&r.store)?;
        if let Some(share) = r.host_other_share {
            for s in runs
                .iter_mut()
                .flat_map(|run| run.cases.iter_mut())
                .flat_map(|c| c.samples.iter_mut())
            {
                s.noise.insert(HOST_OTHER_SHARE.into(), share);
            }
        }
        let keys = step_keys(&runs);
        per_round.push((r.round, keys.into_iter().zip(runs).collect()));
    }
    // Steps in the order the first rounds stored them.
    let mut order: Vec<String> = Vec::new();
    for (_, runs) in &per_round {
        for (k, _) in runs {
            if !order.contains(k) {
                order.push(k.clone());
            }
        }
    }
    let several = order.len() > 1;
    let mut out = Vec::new();
    for key in &order {
        let parts: Vec<(u32, &Run)> = per_round
            .iter()
            .filter_map(|(round, runs)| {
                runs.iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, run)| (*round, run))
            })
            .collect();
        let id = write_pooled(kernel, &parts, several, into)?;
        out.push(Pooled {
            step: key.clone(),
            id,
        });
    }
    Ok(out)
}

fn write_pooled(
    kernel: &str,
    parts: &[(u32, &Run)],
    several: bool,
    into: &mut Store,
) -> Result<i64> {
    let first = parts[0].1;
    let rounds: Vec<u32> = parts.iter().map(|(r, _)| *r).collect();
    let rebooted: Vec<u32> = parts
        .iter()
        .filter(|(_, run)| run.meta.machine["guest"]["rebooted"] == true)
        .map(|(r, _)| *r)
        .collect();
    // Why each of them was booted again, by round.
    let causes: Vec<String> = parts
        .iter()
        .filter_map(|(r, run)| {
            let c = run.meta.machine["guest"]["reboot_cause"].as_str()?;
            Some(format!("round {r}: {c}"))
        })
        .collect();
    let mut machine = first.meta.machine.clone();
    if let Some(g) = machine.get_mut("guest").and_then(|g| g.as_object_mut()) {
        g.insert("round".into(), serde_json::Value::Null);
        g.insert("rounds".into(), serde_json::json!(rounds));
        g.remove("rebooted");
        g.remove("reboot_cause");
        if !rebooted.is_empty() {
            g.insert("rebooted_rounds".into(), serde_json::json!(rebooted));
        }
        if !causes.is_empty() {
            g.insert("reboot_causes".into(), serde_json::json!(causes));
        }
    }
    let mut cases: Vec<Case> = Vec::new();
    for (_, run) in parts {
        for c in &run.cases {
            if !cases.iter().any(|x| x.key() == c.case.key()) {
                cases.push(c.case.clone());
            }
        }
    }
    let label = pooled_label(kernel, first, several);
    let id = into.create_run(&NewRun {
        label: label.as_deref(),
        workload: &first.meta.workload,
        command_line: &first.meta.command_line,
        config: &first.meta.config,
        figures: &first.meta.figures,
        machine: &machine,
        knobs: &first.meta.knobs,
        cases: &cases,
        origin: &first.meta.origin,
    })?;
    into.batch("BEGIN")?;
    let mut seq: BTreeMap<String, i64> = BTreeMap::new();
    for (i, (round, run)) in parts.iter().enumerate() {
        for c in &run.cases {
            for s in &c.samples {
                let mut s = s.clone();
                let n = seq.entry(c.case.key()).or_default();
                s.seq = *n;
                *n += 1;
                // A step's own invocations stay apart inside each boot.
                let inv = s.noise.get(INVOCATION).copied().unwrap_or(0.0);
                s.noise.insert(INVOCATION.into(), i as f64 * 1000.0 + inv);
                s.noise.insert(GUEST_ROUND.into(), f64::from(*round));
                into.add_sample(id, &c.case, &s)?;
            }
        }
    }
    into.batch("COMMIT")?;
    let complete = parts.iter().all(|(_, r)| r.meta.status == Status::Complete);
    let list: Vec<String> = rounds.iter().map(u32::to_string).collect();
    let mut note = format!("pooled from rounds {} of `vmscale guest`", list.join(", "));
    for (round, r) in parts {
        if let Some(n) = &r.meta.note {
            note.push_str(&format!("; round {round}: {n}"));
        }
    }
    into.finish_run(
        id,
        if complete {
            Status::Complete
        } else {
            Status::Incomplete
        },
        Some(&note),
    )?;
    let ended = parts.last().and_then(|(_, r)| r.meta.ended_at.as_deref());
    into.set_times(id, &first.meta.started_at, ended)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Better, Figure, Sample, SampleData};

    /// A guest store of round `round` in `dir` holding one run of one
    /// sample.
    fn round_store(dir: &Path, round: u32, rebooted: bool) -> Round {
        let path = dir.join(format!("round-{round}.db"));
        let mut st = Store::open(&path).unwrap();
        let case = Case::new(1, "x");
        let machine = serde_json::json!({"guest": {
            "accel": "tcg", "round": round, "rebooted": rebooted, "session": "s",
            "reboot_cause": if rebooted { Some("reset") } else { None }
        }});
        let id = st
            .create_run(&NewRun {
                label: Some("k"),
                workload: "synthetic",
                command_line: "run synthetic",
                config: &serde_json::json!({}),
                figures: &[Figure::new("rate", "1/s", Better::Higher, true)],
                machine: &machine,
                knobs: &serde_json::json!({}),
                cases: std::slice::from_ref(&case),
                origin: "measured",
            })
            .unwrap();
        let sample = Sample {
            seq: 0,
            warmup: false,
            taken_at: String::new(),
            data: SampleData {
                figures: BTreeMap::from([("rate".to_string(), f64::from(round))]),
                tasks: Vec::new(),
            },
            vmstat: BTreeMap::new(),
            noise: BTreeMap::new(),
            flagged: false,
        };
        st.add_sample(id, &case, &sample).unwrap();
        st.finish_run(id, Status::Complete, None).unwrap();
        Round {
            round,
            store: path,
            seconds: 1.0,
            // Rounds 1-3 as if the host was read, round 4 as if not.
            host_other_share: (round < 4).then(|| f64::from(round) / 10.0),
        }
    }

    #[test]
    fn a_pooled_run_names_the_rounds_whose_boot_was_a_second_one() {
        let dir = crate::scratch::at("");
        std::fs::create_dir_all(&*dir).unwrap();
        let rounds = [1, 2, 3].map(|r| round_store(&dir, r, r == 2));
        let mut into = Store::open(&dir.join("pooled.db")).unwrap();
        let pooled = pool("k", &rounds, &mut into).unwrap();
        let run = into.load(pooled[0].id).unwrap();
        let g = &run.meta.machine["guest"];
        assert_eq!(g["rounds"], serde_json::json!([1, 2, 3]), "{g}");
        assert_eq!(g["rebooted_rounds"], serde_json::json!([2]), "{g}");
        assert_eq!(
            g["reboot_causes"],
            serde_json::json!(["round 2: reset"]),
            "{g}"
        );
        assert!(
            g.get("rebooted").is_none() && g.get("reboot_cause").is_none(),
            "{g}"
        );
        // Each sample keeps how busy the host was during its own boot.
        let shares: Vec<(f64, f64)> = run.cases[0]
            .samples
            .iter()
            .map(|s| (s.noise[GUEST_ROUND], s.noise[HOST_OTHER_SHARE]))
            .collect();
        assert_eq!(shares, [(1.0, 0.1), (2.0, 0.2), (3.0, 0.3)]);
        // Without a second boot the pooled run says nothing of one.
        let rounds = [round_store(&dir, 4, false)];
        let pooled = pool("k", &rounds, &mut into).unwrap();
        let run = into.load(pooled[0].id).unwrap();
        assert!(run.meta.machine["guest"].get("rebooted_rounds").is_none());
        assert!(!run.cases[0].samples[0].noise.contains_key(HOST_OTHER_SHARE));
    }
}
