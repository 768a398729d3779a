//! Builders for model values, for tests and examples: a run, its cases and
//! their samples in a few chained calls instead of hand-written structs.
//! Not used by vmscale itself.
//!
//! ```
//! use vmscale::model::build::{case, run, sample};
//! let r = run("pft")
//!     .config(serde_json::json!({"mode": "thread"}))
//!     .case(case(2, "fault").sample(sample().figure("fault/wsec", 1e5)))
//!     .build();
//! assert_eq!(r.cases[0].samples[0].data.figures["fault/wsec"], 1e5);
//! ```

use super::{Better, Case, CaseSamples, Figure, Run, RunMeta, Sample, SampleData};
use std::collections::BTreeMap;

/// A complete measured run of `workload`, id 1, with no figures declared.
pub fn run(workload: &str) -> RunBuilder {
    RunBuilder {
        run: Run {
            meta: RunMeta::bare(1, workload, serde_json::json!({})),
            cases: Vec::new(),
        },
    }
}

/// A case of `tasks` tasks and `variant`, without samples.
pub fn case(tasks: usize, variant: &str) -> CaseBuilder {
    CaseBuilder {
        case: CaseSamples {
            case: Case::new(tasks, variant),
            samples: Vec::new(),
        },
    }
}

/// A measured sample (not a warm-up, not flagged) with no figures; its
/// sequence number is its place in the case unless [`SampleBuilder::seq`]
/// sets one.
pub fn sample() -> SampleBuilder {
    SampleBuilder {
        sample: Sample {
            seq: -1,
            warmup: false,
            taken_at: String::new(),
            data: SampleData::default(),
            vmstat: BTreeMap::new(),
            noise: BTreeMap::new(),
            flagged: false,
        },
    }
}

pub struct RunBuilder {
    run: Run,
}

impl RunBuilder {
    pub fn id(mut self, id: i64) -> Self {
        self.run.meta.id = id;
        self
    }

    pub fn label(mut self, label: &str) -> Self {
        self.run.meta.label = Some(label.into());
        self
    }

    pub fn config(mut self, config: serde_json::Value) -> Self {
        self.run.meta.config = config;
        self
    }

    /// Sets one configuration key.
    pub fn set(mut self, key: &str, value: serde_json::Value) -> Self {
        if !self.run.meta.config.is_object() {
            self.run.meta.config = serde_json::json!({});
        }
        if let Some(o) = self.run.meta.config.as_object_mut() {
            o.insert(key.into(), value);
        }
        self
    }

    pub fn machine(mut self, machine: serde_json::Value) -> Self {
        self.run.meta.machine = machine;
        self
    }

    pub fn origin(mut self, origin: &str) -> Self {
        self.run.meta.origin = origin.into();
        self
    }

    /// Declares figures (a workload's `spec.figures()`).
    pub fn figures(mut self, figures: Vec<Figure>) -> Self {
        self.run.meta.figures.extend(figures);
        self
    }

    /// Declares a figure.
    pub fn figure(mut self, name: &str, unit: &str, better: Better, rate: bool) -> Self {
        self.run
            .meta
            .figures
            .push(Figure::new(name, unit, better, rate));
        self
    }

    pub fn case(mut self, c: CaseBuilder) -> Self {
        self.run.cases.push(c.build());
        self
    }

    pub fn build(self) -> Run {
        self.run
    }
}

pub struct CaseBuilder {
    case: CaseSamples,
}

impl CaseBuilder {
    pub fn knob(mut self, name: &str, value: &str) -> Self {
        self.case.case.knobs.insert(name.into(), value.into());
        self
    }

    pub fn sample(mut self, s: SampleBuilder) -> Self {
        let mut s = s.sample;
        if s.seq < 0 {
            s.seq = self.case.samples.len() as i64;
        }
        self.case.samples.push(s);
        self
    }

    /// `n` samples, the i-th made by `f(i)`.
    pub fn samples(mut self, n: usize, f: impl Fn(usize) -> SampleBuilder) -> Self {
        for i in 0..n {
            self = self.sample(f(i));
        }
        self
    }

    pub fn build(self) -> CaseSamples {
        self.case
    }
}

pub struct SampleBuilder {
    sample: Sample,
}

impl SampleBuilder {
    pub fn seq(mut self, seq: i64) -> Self {
        self.sample.seq = seq;
        self
    }

    pub fn warmup(mut self) -> Self {
        self.sample.warmup = true;
        self
    }

    pub fn flagged(mut self) -> Self {
        self.sample.flagged = true;
        self
    }

    pub fn taken_at(mut self, t: &str) -> Self {
        self.sample.taken_at = t.into();
        self
    }

    pub fn figure(mut self, name: &str, value: f64) -> Self {
        self.sample.data.figures.insert(name.into(), value);
        self
    }

    /// Several figures at once.
    pub fn figures(mut self, values: &[(&str, f64)]) -> Self {
        for (k, v) in values {
            self.sample.data.figures.insert(k.to_string(), *v);
        }
        self
    }

    /// One task's figures (appended after the tasks already given).
    pub fn task(mut self, values: &[(&str, f64)]) -> Self {
        self.sample
            .data
            .tasks
            .push(values.iter().map(|(k, v)| (k.to_string(), *v)).collect());
        self
    }

    pub fn vmstat(mut self, name: &str, delta: i64) -> Self {
        self.sample.vmstat.insert(name.into(), delta);
        self
    }

    pub fn noise(mut self, name: &str, value: f64) -> Self {
        self.sample.noise.insert(name.into(), value);
        self
    }

    pub fn build(self) -> Sample {
        self.sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_what_it_is_told() {
        let r = run("fork")
            .id(9)
            .figure("forks/s", "1/s", Better::Higher, true)
            .set("forks", serde_json::json!(4))
            .case(
                case(2, "fork")
                    .knob("thp", "never")
                    .sample(sample().warmup().figure("forks/s", 1.0))
                    .samples(2, |i| {
                        sample().figure("forks/s", i as f64).vmstat("pgfault", 3)
                    }),
            )
            .build();
        assert_eq!(r.meta.id, 9);
        assert_eq!(r.meta.config["forks"], 4);
        let c = &r.cases[0];
        assert_eq!(c.case.key(), "fork/2/thp=never");
        assert_eq!(
            c.samples.iter().map(|s| s.seq).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(c.measured().count(), 2);
        assert_eq!(c.samples[2].vmstat["pgfault"], 3);
    }
}
