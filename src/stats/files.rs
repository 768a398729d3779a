//! `compare --files`: plain sample files compared as runs are, each file
//! one side of one case, described as a run that is never stored (its
//! values stay where the parser put them).

use std::path::{Path, PathBuf};

use crate::model::{Case, Figure, RunMeta};
use crate::stats::case_data::CaseData;
use crate::stats::comparison::{self, Options};
use crate::stats::side::Side;

/// A file as a run's description with no samples, never stored: its
/// values stay where the parser put them.
fn file_meta(i: usize, path: &Path, figure: &Figure) -> RunMeta {
    RunMeta {
        label: Some(path.display().to_string()),
        version: env!("CARGO_PKG_VERSION").into(),
        figures: vec![figure.clone()],
        origin: format!("file {}", path.display()),
        ..RunMeta::bare(
            i as i64 + 1,
            "file",
            serde_json::json!({ "path": path.display().to_string() }),
        )
    }
}

/// The comparison of parsed sample files, each one side of one case.
pub fn compare(
    paths: &[PathBuf],
    values: &[&[f64]],
    figure: &Figure,
    opts: &Options,
) -> comparison::Comparison {
    let case = Case::new(1, "file");
    let metas: Vec<RunMeta> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| file_meta(i, p, figure))
        .collect();
    let sides: Vec<Side> = metas
        .iter()
        .zip(values)
        .map(|(meta, v)| Side {
            name: meta.label.clone().unwrap_or_default(),
            label: String::new(),
            run_id: None,
            meta,
            cases: vec![(
                case.key(),
                CaseData::Values {
                    case: &case,
                    figure: &figure.name,
                    values: v,
                },
            )],
        })
        .collect();
    comparison::compare(&sides, "files", opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::samplefile;
    use crate::model::Better;
    use crate::report::compare_layout;
    use crate::report::export::{self, Format};
    use crate::stats::comparison::RatioOf;
    use crate::stats::rng::SplitMix64;
    use crate::stats::work;

    /// Steps counted while two sample files of `n` log-normal values are
    /// parsed, compared and laid out as text.
    fn compare_steps(n: usize, rng: &mut SplitMix64) -> u64 {
        let text = |scale: f64, rng: &mut SplitMix64| -> String {
            (0..n)
                .map(|_| format!("{:.4}\n", scale * (0.05 * rng.normal()).exp()))
                .collect()
        };
        let (a, b) = (text(100.0, rng), text(101.0, rng));
        let paths = [PathBuf::from("a.txt"), PathBuf::from("b.txt")];
        let figure = Figure::new("value", "", Better::Higher, false);
        let opts = Options {
            alpha: 0.05,
            seed: 1,
            figures: Vec::new(),
            ratio_of: RatioOf::B,
        };
        let (steps, lines) = work::counted(|| {
            let parsed = [
                samplefile::parse("a.txt", &a, None).unwrap(),
                samplefile::parse("b.txt", &b, None).unwrap(),
            ];
            let values = [parsed[0].values.as_slice(), parsed[1].values.as_slice()];
            let c = compare(&paths, &values, &figure, &opts);
            let out = export::exporter(Format::Text)
                .export(&compare_layout::report(&c))
                .unwrap();
            out.lines().count()
        });
        assert!(lines > 10, "{lines} lines");
        steps
    }

    #[test]
    fn doubling_the_samples_does_not_quadruple_the_work() {
        // The regression: 2 x 40,000 samples took 15 times as long
        // as 2 x 10,000. Counted steps, not time.
        let mut rng = SplitMix64::new(9);
        work::assert_n_log_n(&[10_000, 20_000, 40_000], |n| compare_steps(n, &mut rng));
    }
}
