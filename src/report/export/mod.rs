//! One exporter per output format behind one trait, in hyperfine's
//! pattern (`src/export/`): a command builds a [`Report`] once, and the
//! format the user chose decides which [`Exporter`] writes it.
//!
//! A [`Report`] carries what each format needs, so no command writes a
//! format by hand:
//! - `blocks`: titles, paragraphs and tables, for text and Markdown;
//! - `text`: an exact text rendering, when the command has its own
//!   (`show` keeps its historical layout byte for byte);
//! - `records`: one flat table (a header and rows), for CSV;
//! - `data`: the structured result, for JSON.
//!
//! Adding a report (for example `fit`, the USL model): build the data
//! struct (derive `Serialize`), then
//! ```ignore
//! let report = Report {
//!     text: None,
//!     blocks: vec![Block::Title("USL fit, run 7: fault/wsec".into()),
//!                  Block::Table(coefficients_table), Block::Paragraph(warnings)],
//!     records: Records { columns: vec!["parameter".into(), "value".into(), "stderr".into()],
//!                        rows: /* one row per coefficient */ },
//!     data: serde_json::to_value(&fit)?,
//! };
//! print!("{}", export::exporter(format).export(&report)?);
//! ```
//! and take the format from the command line with [`Format::from_flags`].

mod csv;
mod json;
mod markdown;
mod text;

use serde::Serialize;

pub use csv::Csv;
pub use json::Json;
pub use markdown::Markdown;
pub use text::Text;

/// The output formats every reporting command offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Text,
    Markdown,
    Csv,
    Json,
}

impl Format {
    /// The format chosen by the usual `--markdown`, `--csv`, `--json`
    /// flags (clap makes them exclusive); text when none is given.
    pub fn from_flags(markdown: bool, csv: bool, json: bool) -> Format {
        if json {
            Format::Json
        } else if csv {
            Format::Csv
        } else if markdown {
            Format::Markdown
        } else {
            Format::Text
        }
    }
}

/// Column alignment in text and Markdown tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table of pre-formatted cells. `header` may have several lines (as
/// mmtests prints a kernel line over a label line).
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub header: Vec<Vec<String>>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The number of columns: the widest header line or row.
    pub fn columns(&self) -> usize {
        self.header
            .iter()
            .chain(&self.rows)
            .map(|r| r.len())
            .max()
            .unwrap_or(0)
    }
}

/// A piece of a document.
#[derive(Debug, Clone)]
pub enum Block {
    /// A section title.
    Title(String),
    /// Free text (may hold several lines).
    Paragraph(String),
    Table(Table),
}

/// One flat table for CSV: every row has one cell per column.
#[derive(Debug, Clone, Default)]
pub struct Records {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Everything a command reports, in the shapes the formats need.
#[derive(Debug, Clone)]
pub struct Report {
    pub text: Option<String>,
    pub blocks: Vec<Block>,
    pub records: Records,
    pub data: serde_json::Value,
}

/// Writes a report in one format.
pub trait Exporter {
    fn export(&self, report: &Report) -> Result<String, String>;
}

/// The exporter for `format`.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Text => Box::new(Text),
        Format::Markdown => Box::new(Markdown),
        Format::Csv => Box::new(Csv),
        Format::Json => Box::new(Json),
    }
}
