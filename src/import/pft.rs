//! pft tables as mailed to linux-kernel: a header of known columns (`Gb Rep
//! Thr CLine User System Wall flt/cpu/s fault/wsec` as Lameter printed it
//! in 2005, without Rep as pft 0.12 does, without CLine, `Threads` for
//! `Thr`, `Mb` for `Gb`), then rows. Mail quoting ("> ", any depth) is
//! removed, numbers run together when one overflowed its column are split
//! again, prose between rows is skipped. A table whose header stands on a
//! line of its own is read line by line, and a row-like line that does not
//! fit the header is an error naming its line; a table whose line breaks
//! were lost (one long line) is read as a stream of words.

use super::{Options, Table};
use crate::error::{Error, Result};
use crate::model::{Case, SampleData};

/// Words of prose kept before a header as the table's caption.
const CAPTION_WORDS: usize = 14;

/// One column a header may name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Col {
    /// Memory size in GiB (`Gb`) or MiB (`Mb`).
    Size {
        mib: bool,
    },
    Rep,
    Threads,
    CLine,
    /// A time printed with an `s` suffix: the figure's name.
    Secs(&'static str),
    /// A rate: the figure's name.
    Rate(&'static str),
}

impl Col {
    fn named(word: &str) -> Option<Col> {
        Some(match word {
            "Gb" | "GB" => Col::Size { mib: false },
            "Mb" | "MB" => Col::Size { mib: true },
            "Rep" => Col::Rep,
            "Thr" | "Threads" => Col::Threads,
            "CLine" => Col::CLine,
            "User" => Col::Secs("user"),
            "System" => Col::Secs("system"),
            "Wall" => Col::Secs("wall"),
            "flt/cpu/s" => Col::Rate("flt/cpu/s"),
            "fault/wsec" => Col::Rate("fault/wsec"),
            _ => return None,
        })
    }
}

/// A word of the text and the line (1-based) it is on.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    line: usize,
}

/// The text's words, without mail quoting, run-together numbers split.
fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let unquoted = line.trim_start_matches(|c: char| c == '>' || c.is_whitespace());
        for w in unquoted.split_whitespace() {
            for piece in split_run_together(w) {
                out.push(Word {
                    text: piece,
                    line: n + 1,
                });
            }
        }
    }
    out
}

/// "1137.74s15.09s" -> ["1137.74s", "15.09s"]; "15771.8551208616.196" ->
/// ["15771.855", "1208616.196"] (the first number given as many decimals
/// as the last, as printf prints a column). Anything else is kept whole.
fn split_run_together(w: &str) -> Vec<String> {
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
    let mut out = Vec::new();
    let mut rest = w;
    // Split after each interior `s` that follows a digit and precedes one.
    // Byte indices: `s` and digits are ASCII, so i + 1 is a char boundary.
    while let Some(i) = (1..rest.len()).find(|&i| {
        let b = rest.as_bytes();
        b[i] == b's' && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit)
    }) {
        let (head, tail) = rest.split_at(i + 1);
        if !numeric(&head[..head.len() - 1]) {
            return vec![w.to_string()];
        }
        out.push(head.to_string());
        rest = tail;
    }
    let (body, suffix) = match rest.strip_suffix('s') {
        Some(b) => (b, "s"),
        None => (rest, ""),
    };
    if numeric(body) && body.matches('.').count() == 2 {
        let last_decimals = body.len() - body.rfind('.').unwrap_or(0) - 1;
        let first_dot = body.find('.').unwrap_or(0);
        let cut = first_dot + 1 + last_decimals;
        let ok = body
            .get(first_dot + 1..cut)
            .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
            && body[cut..].starts_with(|c: char| c.is_ascii_digit());
        if ok {
            out.push(format!("{}{suffix}", &body[..cut]));
            out.push(format!("{}{suffix}", &body[cut..]));
            return out;
        }
    }
    out.push(rest.to_string());
    out
}

/// A header starting at `words[i]`: its columns, or None.
fn header_at(words: &[Word], i: usize) -> Option<Vec<Col>> {
    let first = Col::named(&words.get(i)?.text)?;
    if !matches!(first, Col::Size { .. }) {
        return None;
    }
    let mut cols = vec![first];
    while let Some(c) = words.get(i + cols.len()).and_then(|w| Col::named(&w.text)) {
        if cols.contains(&c) || matches!(c, Col::Size { .. }) {
            break;
        }
        cols.push(c);
    }
    let required = [
        Col::Threads,
        Col::Secs("user"),
        Col::Secs("system"),
        Col::Secs("wall"),
        Col::Rate("flt/cpu/s"),
        Col::Rate("fault/wsec"),
    ];
    required.iter().all(|r| cols.contains(r)).then_some(cols)
}

/// A number as a column prints it: finite, not negative, `s` after times.
fn number(word: &str, col: Col) -> Result<f64> {
    let w = match col {
        Col::Secs(_) => word.strip_suffix('s').unwrap_or(word),
        _ => word,
    };
    let v: f64 = w
        .parse()
        .map_err(|_| Error::Input(format!("'{word}' is not a number")))?;
    if !v.is_finite() || v < 0.0 || w.contains(['e', 'E', 'n', 'N', 'i', 'I']) {
        return Err(Error::Input(format!(
            "'{word}' is not a plain non-negative number"
        )));
    }
    let whole = |what: &str, max: f64| {
        if v < 1.0 || v.fract() != 0.0 || v > max {
            Err(Error::Input(format!(
                "{what} '{word}' is not a whole number 1..{max}"
            )))
        } else {
            Ok(v)
        }
    };
    match col {
        Col::Threads => whole("thread count", crate::limits::MAX_TASKS as f64),
        Col::Rep => whole("Rep", 1e6),
        Col::CLine => whole("CLine", 1e6),
        _ => Ok(v),
    }
}

/// One parsed row: its case key parts and figures.
struct Row {
    size: f64,
    threads: usize,
    cline: Option<f64>,
    data: SampleData,
}

fn row(cells: &[Word], cols: &[Col]) -> Result<Row> {
    if cells.len() != cols.len() {
        return Err(Error::Input(format!(
            "{} values where the header has {} columns",
            cells.len(),
            cols.len()
        )));
    }
    let mut r = Row {
        size: 0.0,
        threads: 0,
        cline: None,
        data: SampleData::default(),
    };
    for (w, &col) in cells.iter().zip(cols) {
        let v = number(&w.text, col)?;
        let f = &mut r.data.figures;
        match col {
            Col::Size { mib } => {
                r.size = v;
                let unit = if mib { 1u64 << 20 } else { 1u64 << 30 };
                f.insert(if mib { "mb" } else { "gb" }.into(), v);
                f.insert("bytes".into(), v * unit as f64);
            }
            Col::Rep => {
                f.insert("rep".into(), v);
            }
            Col::Threads => r.threads = v as usize,
            Col::CLine => {
                r.cline = Some(v);
                f.insert("cline".into(), v);
            }
            Col::Secs(name) | Col::Rate(name) => {
                f.insert(name.into(), v);
            }
        }
    }
    Ok(r)
}

/// Whether a line's words look like a row (a number first, mostly numbers):
/// such a line must parse, where prose is skipped.
fn row_like(line: &[Word]) -> bool {
    let num = |w: &Word| {
        let t = w.text.strip_suffix('s').unwrap_or(&w.text);
        !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.')
    };
    line.first().is_some_and(num) && line.iter().filter(|w| num(w)).count() * 2 >= line.len()
}

/// The rows of a table whose header ends before `words[start]`, read line
/// by line until the next header; returns the rows and where reading ended.
fn rows_by_line(
    words: &[Word],
    start: usize,
    cols: &[Col],
    opts: &Options,
    skipped: &mut Vec<String>,
) -> Result<(Vec<Row>, usize)> {
    let mut rows = Vec::new();
    let mut i = start;
    // Prose since the last row: a row-like line after it may be another table.
    let mut prose = false;
    while i < words.len() && header_at(words, i).is_none() {
        let line_no = words[i].line;
        let end = words[i..]
            .iter()
            .position(|w| w.line != line_no)
            .map_or(words.len(), |n| i + n);
        let line = &words[i..end];
        if row_like(line) {
            match row(line, cols) {
                Ok(r) => {
                    rows.push(r);
                    prose = false;
                }
                Err(_) if prose => return Ok((rows, i)),
                Err(e) if opts.skip_bad_rows => skipped.push(format!("line {line_no}: {e}")),
                Err(e) => {
                    return Err(Error::Input(format!(
                        "line {line_no}: a row that does not fit the header: {e}; fix the line \
                         or pass --skip-bad-rows to leave it out"
                    )));
                }
            }
        } else {
            prose = true;
        }
        i = end;
    }
    Ok((rows, i))
}

/// The rows of a table in a stream of words (line breaks lost): rows follow
/// one another until a word that does not fit.
fn rows_by_word(words: &[Word], start: usize, cols: &[Col]) -> (Vec<Row>, usize) {
    let mut rows = Vec::new();
    let mut j = start;
    while let Some(r) = words.get(j..j + cols.len()).and_then(|c| row(c, cols).ok()) {
        rows.push(r);
        j += cols.len();
    }
    (rows, j)
}

/// Every pft table in the text; `skipped` collects rows left out under
/// `--skip-bad-rows`.
pub fn parse(text: &str, opts: &Options, skipped: &mut Vec<String>) -> Result<Vec<Table>> {
    let words = words(text);
    let mut tables = Vec::new();
    let mut i = 0;
    let mut prose_start = 0;
    while i < words.len() {
        let Some(cols) = header_at(&words, i) else {
            i += 1;
            continue;
        };
        let caption = words[prose_start.max(i.saturating_sub(CAPTION_WORDS))..i]
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let header_end = i + cols.len();
        let line = words[i].line;
        let alone = words[i..header_end].iter().all(|w| w.line == line)
            && (i == 0 || words[i - 1].line != line)
            && words.get(header_end).is_none_or(|w| w.line != line);
        let (rows, j) = if alone {
            rows_by_line(&words, header_end, &cols, opts, skipped)?
        } else {
            rows_by_word(&words, header_end, &cols)
        };
        if !rows.is_empty() {
            tables.push(table(
                &words[i..header_end],
                &cols,
                caption,
                rows,
                tables.len() + 1,
            ));
        }
        i = j.max(i + 1);
        prose_start = i;
    }
    Ok(tables)
}

fn table(header: &[Word], cols: &[Col], caption: String, rows: Vec<Row>, block: usize) -> Table {
    let format = match (cols.contains(&Col::Rep), cols.contains(&Col::CLine)) {
        (true, true) => "pft-lameter",
        (false, true) => "pft-0.12",
        _ => "pft",
    };
    // One case per (size, threads, CLine): the variant names the size (and
    // CLine) when the table holds more than one.
    let mut shapes: Vec<(f64, Option<f64>)> = Vec::new();
    for r in &rows {
        if !shapes.contains(&(r.size, r.cline)) {
            shapes.push((r.size, r.cline));
        }
    }
    let unit = if cols.contains(&Col::Size { mib: true }) {
        "Mb"
    } else {
        "Gb"
    };
    let several_clines = shapes.iter().any(|s| s.1 != shapes[0].1);
    let variant = |r: &Row| {
        if shapes.len() == 1 {
            return crate::workload::pft::FAULT.to_string();
        }
        match r.cline.filter(|_| several_clines) {
            Some(c) => format!("{}{unit}-cline{c}", r.size),
            None => format!("{}{unit}", r.size),
        }
    };
    let header_words: Vec<&str> = header.iter().map(|w| w.text.as_str()).collect();
    Table {
        workload: crate::workload::pft_args::SPEC.name,
        format,
        // pft's own figures, so imported runs compare with measured ones.
        figures: crate::workload::pft_args::SPEC.figures(),
        config: serde_json::json!({
            "imported": format,
            "block": block,
            "caption": caption,
            "header": header_words.join(" "),
            "columns": header_words,
            "mode": "?",
            "thp": "?",
            "pin": "?",
        }),
        rows: rows
            .iter()
            .map(|r| (Case::new(r.threads, &variant(r)), r.data.clone()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Vec<Table> {
        parse(text, &Options::default(), &mut Vec::new()).unwrap()
    }

    #[test]
    fn run_together_numbers_are_split() {
        assert_eq!(split_run_together("1137.74s15.09s"), ["1137.74s", "15.09s"]);
        assert_eq!(
            split_run_together("15771.8551208616.196"),
            ["15771.855", "1208616.196"]
        );
        assert_eq!(split_run_together("2.6.13"), ["2.6.13"]);
        assert_eq!(split_run_together("2.6.13-rc6"), ["2.6.13-rc6"]);
        assert_eq!(split_run_together("seconds"), ["seconds"]);
        // Found by cargo-fuzz: multi-byte characters before the split.
        assert_eq!(
            split_run_together("2353.4\u{fffd}\u{fffd}5s81661208616.196"),
            ["2353.4\u{fffd}\u{fffd}5s81661208616.196"]
        );
        assert_eq!(split_run_together("\u{e9}1s2s"), ["\u{e9}1s2s"]);
    }

    #[test]
    fn quoted_eight_column_mb_table_with_prose_and_two_sizes() {
        let t = parse_ok(
            "> > Mb Rep Threads User System Wall flt/cpu/s fault/wsec\n\
             > >  512   3    1   0.10s   1.234s   1.40s  9000.125  8999.5\n\
             > > (then the larger size)\n\
             > > 1024   3    1   0.20s   2.50s   2.70s  8000.000  7999.000\n",
        );
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].format, "pft");
        let r = &t[0].rows;
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].0, Case::new(1, "512Mb"));
        assert_eq!(r[1].0, Case::new(1, "1024Mb"));
        assert_eq!(r[0].1.figures["system"], 1.234);
        assert_eq!(r[0].1.figures["bytes"], 512.0 * 1048576.0);
        assert!(!r[0].1.figures.contains_key("cline"), "no invented column");
    }

    #[test]
    fn a_bad_row_names_its_line_unless_skipped() {
        let text = "Gb Rep Thr CLine User System Wall flt/cpu/s fault/wsec\n\
                    1 3 1 1 0.1s 0.2s 0.3s 10.0 10.0\n\
                    1 3 2 1 0.1s 0.2s 0.3s 10.0\n\
                    1 3 4 1 0.1s 0.2s 0.3s 10.0 40.0\n";
        let Err(Error::Input(e)) = parse(text, &Options::default(), &mut Vec::new()) else {
            panic!("a bad row is not bad input")
        };
        assert!(e.starts_with("line 3:"), "{e}");
        let mut skipped = Vec::new();
        let opts = Options {
            skip_bad_rows: true,
        };
        let t = parse(text, &opts, &mut skipped).unwrap();
        assert_eq!(t[0].rows.len(), 2);
        assert_eq!(skipped.len(), 1);
    }

    #[test]
    fn absurd_thread_counts_are_refused() {
        let e = parse(
            "Gb Thr CLine User System Wall flt/cpu/s fault/wsec\n1 1e30 1 1s 1s 1s 1 1\n",
            &Options::default(),
            &mut Vec::new(),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}
