//! Store queries for managing runs: deleting, relabelling, listing with
//! filters, and resolving a label that may name several runs.

use super::error::{Error, Result};
use super::{RunListing, Store};

/// Which stored runs a command looks at (`list`, `history`,
/// `report --history`, a bisection's stored rounds); every field that is
/// set must match. The options' help words what each keeps.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ListFilter {
    /// Only runs of this workload (pft, fork, ...)
    #[arg(long)]
    pub workload: Option<String>,
    /// Only runs whose label is LABEL or starts with LABEL/ (a suite)
    #[arg(long)]
    pub label: Option<String>,
    /// Only runs on a kernel release containing TEXT (e.g. 6.18)
    #[arg(long, value_name = "TEXT")]
    pub kernel: Option<String>,
    /// Only runs started on or after DATE (YYYY-MM-DD, UTC)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only runs started before DATE (YYYY-MM-DD, UTC)
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
}

impl ListFilter {
    fn keeps(&self, r: &RunListing, kernel: Option<&str>) -> bool {
        let label = r.label.as_deref().unwrap_or("");
        self.workload.as_ref().is_none_or(|w| &r.workload == w)
            && self.label.as_ref().is_none_or(|l| {
                label == l
                    || label
                        .strip_prefix(l.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            && self
                .kernel
                .as_ref()
                .is_none_or(|k| kernel.is_some_and(|have| have.contains(k.as_str())))
            && self
                .since
                .as_ref()
                .is_none_or(|s| r.started_at.as_str() >= s.as_str())
            && self
                .until
                .as_ref()
                .is_none_or(|u| r.started_at.as_str() < u.as_str())
    }
}

impl Store {
    /// Ids of the runs carrying exactly `label`, oldest first.
    pub fn runs_labelled(&self, label: &str) -> Result<Vec<(i64, String)>> {
        self.db
            .borrow_mut()
            .query(
                "SELECT id, workload FROM runs WHERE label = ?1 ORDER BY id",
                &[label.into()],
            )?
            .iter()
            .map(|r| Ok((r.int(0)?, r.text(1)?)))
            .collect()
    }

    /// The one run carrying `label`, else the one run of a suite `label`
    /// (labels `label/...`); several are refused, naming them.
    pub fn resolve_label(&self, label: &str) -> Result<Option<i64>> {
        let mut found: Vec<(i64, String)> = self
            .runs_labelled(label)?
            .into_iter()
            .map(|(id, w)| (id, format!("{id} ({w})")))
            .collect();
        if found.is_empty() {
            found = self
                .suite_runs(label)?
                .into_iter()
                .map(|(id, l)| (id, format!("{l} (run {id})")))
                .collect();
        }
        match found.as_slice() {
            [] => Ok(None),
            [(id, _)] => Ok(Some(*id)),
            many => {
                let names: Vec<&str> = many.iter().map(|(_, n)| n.as_str()).collect();
                Err(Error::Ambiguous(format!(
                    "'{label}' is ambiguous, it names {} runs:\n  {}\n\
                     name one by its id or full label (`vmscale list --label {label}`)",
                    many.len(),
                    names.join("\n  ")
                )))
            }
        }
    }

    /// Runs whose label is `suite/...`, oldest first, with their labels.
    fn suite_runs(&self, suite: &str) -> Result<Vec<(i64, String)>> {
        let prefix = format!("{suite}/");
        let chars = prefix.chars().count() as i64;
        self.db
            .borrow_mut()
            .query(
                "SELECT id, label FROM runs WHERE substr(label, 1, ?2) = ?1 ORDER BY id",
                &[prefix.into(), chars.into()],
            )?
            .iter()
            .map(|r| Ok((r.int(0)?, r.text(1)?)))
            .collect()
    }

    /// The runs `filter` keeps, oldest first, and one message per damaged
    /// row (see `list_checked`).
    pub fn list_filtered(&self, filter: &ListFilter) -> Result<(Vec<RunListing>, Vec<String>)> {
        let (runs, damaged) = self.list_checked()?;
        let mut kept = Vec::new();
        for r in runs {
            let kernel = match filter.kernel {
                Some(_) => self.kernel_release(r.id)?,
                None => None,
            };
            if filter.keeps(&r, kernel.as_deref()) {
                kept.push(r);
            }
        }
        Ok((kept, damaged))
    }

    /// The kernel release in the run's machine snapshot, if recorded.
    fn kernel_release(&self, id: i64) -> Result<Option<String>> {
        let machine: Option<String> = self
            .db
            .borrow_mut()
            .query_one("SELECT machine FROM runs WHERE id = ?1", &[id.into()])?
            .map(|r| r.text(0))
            .transpose()?;
        Ok(machine
            .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
            .and_then(|v| v.get("kernel_release")?.as_str().map(String::from)))
    }

    /// Deletes a run with its cases and samples; false if it was not there.
    pub fn delete_run(&mut self, id: i64) -> Result<bool> {
        self.db.get_mut().immediate(|db| {
            db.execute("DELETE FROM samples WHERE run_id = ?1", &[id.into()])?;
            db.execute("DELETE FROM cases WHERE run_id = ?1", &[id.into()])?;
            Ok(db.execute("DELETE FROM runs WHERE id = ?1", &[id.into()])? == 1)
        })
    }

    /// Sets (or, with an empty label, removes) a run's label.
    pub fn set_label(&mut self, id: i64, label: &str) -> Result<()> {
        let value = (!label.is_empty()).then_some(label);
        self.db.get_mut().execute(
            "UPDATE runs SET label = ?2 WHERE id = ?1",
            &[id.into(), value.into()],
        )?;
        Ok(())
    }

    /// Sets a run's start and end times (a run pooled from several
    /// stored runs keeps the first start and the last end).
    pub fn set_times(&mut self, id: i64, started_at: &str, ended_at: Option<&str>) -> Result<()> {
        self.db.get_mut().execute(
            "UPDATE runs SET started_at = ?2, ended_at = ?3 WHERE id = ?1",
            &[id.into(), started_at.into(), ended_at.into()],
        )?;
        Ok(())
    }

    /// The id the next created run will get (for naming a suite before
    /// its first run exists).
    pub fn next_id(&self) -> Result<i64> {
        self.db
            .borrow_mut()
            .query_one("SELECT COALESCE(MAX(id), 0) + 1 FROM runs", &[])?
            .map_or(Ok(1), |r| r.int(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(label: Option<&str>, workload: &str, started: &str) -> RunListing {
        RunListing {
            id: 1,
            label: label.map(String::from),
            workload: workload.into(),
            started_at: started.into(),
            status: "complete".into(),
            samples: 1,
            origin: "measured".into(),
            command_line: String::new(),
            host: None,
        }
    }

    #[test]
    fn a_label_filter_keeps_the_label_and_its_suite_only() {
        let f = ListFilter {
            label: Some("X".into()),
            ..Default::default()
        };
        assert!(f.keeps(&listing(Some("X"), "pft", ""), None));
        assert!(f.keeps(&listing(Some("X/pft"), "pft", ""), None));
        assert!(!f.keeps(&listing(Some("XY/pft"), "pft", ""), None));
        assert!(!f.keeps(&listing(None, "pft", ""), None));
    }

    #[test]
    fn dates_bound_the_start_and_kernel_must_be_known() {
        let f = ListFilter {
            since: Some("2026-01-02".into()),
            until: Some("2026-01-03".into()),
            kernel: Some("6.18".into()),
            ..Default::default()
        };
        let r = listing(None, "pft", "2026-01-02T10:00:00Z");
        assert!(f.keeps(&r, Some("6.18.0-1")));
        assert!(!f.keeps(&r, Some("6.1.0")));
        assert!(!f.keeps(&r, None));
        assert!(!f.keeps(&listing(None, "pft", "2026-01-03T00:00:00Z"), Some("6.18")));
        assert!(!f.keeps(&listing(None, "pft", "2026-01-01T23:59:59Z"), Some("6.18")));
    }
}
