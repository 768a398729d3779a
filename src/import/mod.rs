//! Reading other tools' results into vmscale's model: pft tables (Lameter's
//! layouts as they appear in mail, see `pft`) and will-it-scale's
//! runtest CSV; plain sample files for `compare --files` (`samplefile`).
//! Parsers are pure: text in, runs-to-be out; the import
//! command stores them.

pub mod mail_date;
pub mod pft;
pub mod samplefile;
pub mod wis;

pub use mail_date::mail_date;

use crate::error::{Error, Result};
use crate::model::{Case, Figure, SampleData};

/// One table read from a file, ready to be stored as an imported run.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub workload: &'static str,
    /// "pft-lameter", "pft-0.12" or "will-it-scale".
    pub format: &'static str,
    pub figures: Vec<Figure>,
    /// Provenance and what the table says of its setup.
    pub config: serde_json::Value,
    /// Rows in file order; a case may repeat (several rows, several samples).
    pub rows: Vec<(Case, SampleData)>,
}

/// How strictly rows are read.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Leave out rows that do not parse (each reported) instead of failing.
    pub skip_bad_rows: bool,
}

/// Reads every table the text holds, trying each format in turn; rows left
/// out under `skip_bad_rows` are described in `skipped`.
pub fn parse(
    text: &str,
    file_stem: &str,
    opts: &Options,
    skipped: &mut Vec<String>,
) -> Result<Vec<Table>> {
    if let Some(t) = wis::parse(text, file_stem)? {
        return Ok(vec![t]);
    }
    let tables = pft::parse(text, opts, skipped)?;
    if tables.is_empty() {
        return Err(Error::Input(
            "no table found: import reads pft tables (a header `Gb Rep Thr CLine User System Wall \
             flt/cpu/s fault/wsec`, with or without Rep) and will-it-scale CSV (a header \
             `tasks,processes,processes_idle,threads,threads_idle,linear`)"
                .into(),
        ));
    }
    Ok(tables)
}
