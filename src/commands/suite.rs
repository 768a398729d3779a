//! Labels of a suite's runs: `SUITE/WORKLOAD`, distinct within the suite
//! (`X/pft`, `X/pft-process`, ...), so each run can be named and the whole
//! suite listed with `list --label SUITE`.

use crate::cli::Harness;

pub struct Labels {
    suite: String,
    given: Vec<String>,
}

impl Labels {
    pub fn new(suite: &str) -> Labels {
        Labels {
            suite: suite.to_string(),
            given: Vec::new(),
        }
    }

    /// The next label for a run of `workload`; a workload seen before is
    /// told apart by its mode (from `config`), else by a number.
    pub fn next(&mut self, workload: &str, config: &serde_json::Value) -> String {
        let mut name = format!("{}/{workload}", self.suite);
        if self.given.contains(&name) {
            name = match config.get("mode").and_then(|m| m.as_str()) {
                Some(mode) => format!("{name}-{mode}"),
                None => name,
            };
        }
        let base = name.clone();
        let mut k = 2;
        while self.given.contains(&name) {
            name = format!("{base}-{k}");
            k += 1;
        }
        self.given.push(name.clone());
        name
    }

    /// `h` with the next label in place of the suite's.
    pub fn harness(&mut self, h: &Harness, workload: &str, config: &serde_json::Value) -> Harness {
        let mut h = h.clone();
        h.label = Some(self.next(workload, config));
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeated_workloads_get_their_mode_then_a_number() {
        let mut l = Labels::new("X");
        assert_eq!(l.next("pft", &json!({"mode": "thread"})), "X/pft");
        assert_eq!(l.next("pft", &json!({"mode": "process"})), "X/pft-process");
        assert_eq!(l.next("fork", &json!({})), "X/fork");
        assert_eq!(l.next("fork", &json!({})), "X/fork-2");
        assert_eq!(l.next("fork", &json!({})), "X/fork-3");
    }
}
