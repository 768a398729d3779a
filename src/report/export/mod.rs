//! One exporter per output format behind one trait, in hyperfine's
//! pattern (`src/export/`): a command builds a [`Report`] once, and the
//! format the user chose decides which [`Exporter`] writes it.
//!
//! A [`Report`] carries what each format needs, so no command writes a
//! format by hand:
//! - `blocks`: the document as typed [`Block`]s (titles, paragraphs,
//!   tables, named values), for text and Markdown. A table may carry a
//!   fixed text [`Layout`], so the text exporter reprints a historical
//!   report byte for byte while Markdown gets the same cells as a pipe
//!   table under the table's title;
//! - `text`: a text rendering that replaces the blocks in text only, when
//!   the command's text differs from its blocks (`show` shades cells for a
//!   terminal and leaves a Markdown-only summary out);
//! - `records`: one flat table (a header and rows), for CSV;
//! - `data`: the structured result, for JSON.
//!
//! Adding a report (for example `fit`, the USL model): build the data
//! struct (derive `Serialize`), then
//! ```ignore
//! let report = Report {
//!     text: None,
//!     blocks: vec![Block::Title("USL fit, run 7: fault/wsec".into()),
//!                  Block::Table(Table { title: "Coefficients".into(), ..coefficients }),
//!                  Block::Paragraph(warnings)],
//!     records: Records { columns: vec!["parameter".into(), "value".into(), "stderr".into()],
//!                        rows: /* one row per coefficient */ },
//!     data: serde_json::to_value(&fit)?,
//! };
//! print!("{}", export::exporter(format).export(&report)?);
//! ```
//! and take the format from the command line with [`Format::from_flags`].

mod csv;
mod json;
pub mod markdown;
pub mod text;

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

impl Align {
    /// Alignments in runs: `[(Left, 1), (Right, 5), (Left, 1)]` is a
    /// name, five numbers and a note.
    pub fn runs(runs: &[(Align, usize)]) -> Vec<Align> {
        runs.iter()
            .flat_map(|&(a, n)| std::iter::repeat_n(a, n))
            .collect()
    }
}

/// A table of pre-formatted cells. `header` may have several lines (as
/// mmtests prints a kernel line over a label line).
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// What the table shows: the line over it in text (when not empty),
    /// its heading in Markdown, its name in JSON.
    pub title: String,
    pub header: Vec<Vec<String>>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
    /// The fixed text layout of a historical report; None: columns as
    /// wide as their widest cell, two spaces apart.
    pub layout: Option<Layout>,
}

impl Table {
    /// A table under `title` with one header line and columns as wide as
    /// their widest cell.
    pub fn plain(
        title: String,
        header: &[&str],
        align: Vec<Align>,
        rows: Vec<Vec<String>>,
    ) -> Table {
        Table {
            title,
            header: vec![header.iter().map(|h| h.to_string()).collect()],
            align,
            rows,
            layout: None,
        }
    }

    /// The number of columns: the widest header line or row.
    pub fn columns(&self) -> usize {
        self.header
            .iter()
            .chain(&self.rows)
            .map(|r| r.len())
            .max()
            .unwrap_or(0)
    }

    /// The columns with any text (a text layout's spacer or an unused
    /// flag column has none): what formats without fixed columns show.
    pub fn filled_columns(&self) -> Vec<usize> {
        let filled = |i: usize| {
            self.header
                .iter()
                .chain(&self.rows)
                .any(|r| r.get(i).is_some_and(|c| !c.trim().is_empty()))
        };
        (0..self.columns()).filter(|&i| filled(i)).collect()
    }
}

/// How a table is laid out in text when its columns are fixed (the
/// reports users know, printed byte for byte as they always were).
///
/// Each cell is printed after its column's separator, padded to the
/// column's width; a row stops at its last cell (no trailing blanks), and
/// a row of one cell in a wider table spans it: printed unpadded after the
/// first separator (a group line such as lockmeter's `[source]`, or a
/// warning under the row it concerns).
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Per column: the text before it and its least width.
    pub columns: Vec<(&'static str, usize)>,
    /// The text printed above the rows instead of the title and `header`,
    /// when the historical heading does not follow the columns.
    pub text_header: Option<String>,
    /// Whether text prints the title over the table (historical tables
    /// without one are still named in Markdown and JSON).
    pub text_title: bool,
    /// (column, characters): text cuts that column's longer cells to fit
    /// 80 columns, ending them in `~`; other formats keep them whole.
    pub fit: Option<(usize, usize)>,
}

impl Layout {
    /// Columns one space apart, of these widths.
    pub fn spaced(widths: &[usize]) -> Layout {
        Layout::columns(
            widths
                .iter()
                .enumerate()
                .map(|(i, w)| (if i == 0 { "" } else { " " }, *w))
                .collect(),
        )
    }

    /// A label column `label` wide, then `n` columns `width` wide, with
    /// nothing between them (the widths hold the spacing).
    pub fn label_and(label: usize, n: usize, width: usize) -> Layout {
        let rest = std::iter::repeat_n(("", width), n);
        Layout::columns([("", label)].into_iter().chain(rest).collect())
    }

    /// The same columns without a title line in text.
    pub fn untitled(mut self) -> Layout {
        self.text_title = false;
        self
    }

    /// The same columns with `sep` before column `i`.
    pub fn sep(mut self, i: usize, sep: &'static str) -> Layout {
        self.columns[i].0 = sep;
        self
    }

    /// These columns, titled in text.
    pub fn columns(columns: Vec<(&'static str, usize)>) -> Layout {
        Layout {
            columns,
            text_header: None,
            text_title: true,
            fit: None,
        }
    }

    /// The same columns with a verbatim text heading.
    pub fn with_header(mut self, text: impl Into<String>) -> Layout {
        self.text_header = Some(text.into());
        self
    }
}

/// Named values under an optional title: "Time Elapsed  12.3" lines in
/// text, a list in Markdown.
#[derive(Debug, Clone, Default)]
pub struct KeyValue {
    pub title: String,
    pub pairs: Vec<(String, String)>,
    /// Text widths of the key (left-aligned) and the value (right-aligned),
    /// one space apart; None: "key: value".
    pub widths: Option<(usize, usize)>,
}

/// A piece of a document. Text prints the blocks one after another; the
/// other formats keep their content and drop the spacing.
#[derive(Debug, Clone)]
pub enum Block {
    /// A section title (text puts a blank line before every title but
    /// the first block).
    Title(String),
    /// Free text, verbatim in text (may hold several lines): notes,
    /// warnings, descriptions.
    Paragraph(String),
    Table(Table),
    KeyValue(KeyValue),
    /// A blank line in text; nothing in the other formats.
    Blank,
}

impl Block {
    /// The table blocks of a document.
    pub fn tables(blocks: &[Block]) -> impl Iterator<Item = &Table> {
        blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
    }
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
    fn export(&self, report: &Report) -> crate::error::Result<String>;
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

#[cfg(test)]
mod tests;
