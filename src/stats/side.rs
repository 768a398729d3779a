//! One column of a comparison: a run, one knob variant of a run, or a
//! sample file, its cases by the key they are matched on.

use super::case_data::CaseData;
use crate::model::{Run, RunMeta};

/// One column of a comparison: a run, one knob variant of a run, or a file.
pub struct Side<'a> {
    /// First header line ("run 3", "A", "a.txt").
    pub name: String,
    /// Second header line (label, knob values), may be empty.
    pub label: String,
    pub run_id: Option<i64>,
    pub meta: &'a RunMeta,
    /// Cases by the key they are matched on, in run order.
    pub cases: Vec<(String, CaseData<'a>)>,
}

impl<'a> Side<'a> {
    /// A whole run, its cases matched by `Case::key()`.
    /// A guest run's column is named by its kernel release (mmtests'
    /// columns), with the run id and label under it.
    pub fn run(run: &'a Run) -> Side<'a> {
        let id = run.meta.id;
        let label = run.meta.label.clone().unwrap_or_default();
        let guest_release = run.meta.machine["kernel_release"]
            .as_str()
            .filter(|_| run.meta.machine["guest"].is_object());
        let (name, label) = match guest_release {
            Some(rel) if label.is_empty() || label == rel => (rel.to_string(), format!("run {id}")),
            Some(rel) => (rel.to_string(), format!("{label} (run {id})")),
            None => (format!("run {id}"), label),
        };
        Side {
            name,
            label,
            run_id: Some(run.meta.id),
            meta: &run.meta,
            cases: run
                .cases
                .iter()
                .map(|c| (c.case.key(), CaseData::Stored(c)))
                .collect(),
        }
    }

    /// The knob variants of one run: cases that differ only in their knob
    /// values, one side per distinct knob setting, matched on the rest of
    /// the key. Fewer than two variants gives an empty list.
    pub fn variants(run: &'a Run) -> Vec<Side<'a>> {
        let settings = run.knob_settings();
        if settings.len() < 2 {
            return Vec::new();
        }
        settings
            .iter()
            .enumerate()
            .map(|(i, setting)| Side {
                name: variant_letter(i),
                label: if setting.is_empty() {
                    "(no knobs)".into()
                } else {
                    setting.clone()
                },
                run_id: Some(run.meta.id),
                meta: &run.meta,
                cases: run
                    .cases
                    .iter()
                    .filter(|c| &c.case.knobs_label() == setting)
                    .map(|c| {
                        let key = format!("{}/{}", c.case.variant, c.case.tasks);
                        (key, CaseData::Stored(c))
                    })
                    .collect(),
            })
            .collect()
    }
}

/// "A", "B", ... "Z", "AA", ...
pub fn variant_letter(i: usize) -> String {
    let mut s = String::new();
    let mut n = i + 1;
    while n > 0 {
        n -= 1;
        s.insert(0, (b'A' + (n % 26) as u8) as char);
        n /= 26;
    }
    s
}
