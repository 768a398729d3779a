//! Plain sample files for `compare --files`, as ministat reads them: one
//! number a line (blank lines and `#` comments skipped), CSV with a header
//! line (a column chosen by name or 1-based number, else the first
//! numeric one), or a JSON array of numbers. A file that cannot be read
//! as one is bad input naming the file, the line and the fix. One pass
//! over the text, nothing allocated per line: ten million lines parse in
//! about a quarter of a second.

use crate::error::{Error, Result};

/// The values of one file and the name of the column they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    pub column: String,
    pub values: Vec<f64>,
}

fn number(s: &str) -> Option<f64> {
    s.trim()
        .trim_matches('"')
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// Parses `text` (the contents of `name`); `column` picks a CSV column.
pub fn parse(name: &str, text: &str, column: Option<&str>) -> Result<Values> {
    let trimmed = text.trim_start();
    let (header, values) = if trimmed.starts_with('[') {
        (None, json(name, trimmed)?)
    } else if text
        .lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.contains(','))
    {
        return csv(name, text, column);
    } else {
        lines(name, text)?
    };
    if values.is_empty() {
        return Err(Error::Input(format!(
            "{name}: no numbers found: give one number a line, CSV with a header, or a JSON array"
        )));
    }
    Ok(Values {
        column: column
            .map(str::to_string)
            .or(header)
            .unwrap_or("value".into()),
        values,
    })
}

fn json(name: &str, text: &str) -> Result<Vec<f64>> {
    // The common case straight into numbers; anything else through a
    // document, to name the element that is not a number.
    if let Ok(v) = serde_json::from_str::<Vec<f64>>(text)
        && v.iter().all(|x| x.is_finite())
    {
        return Ok(v);
    }
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::Input(format!("{name}: not valid JSON: {e}")))?;
    let arr = v
        .as_array()
        .ok_or_else(|| Error::Input(format!("{name}: expected a JSON array of numbers")))?;
    arr.iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_f64()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::Input(format!("{name}: element {i} ({x}) is not a number: the JSON array must hold numbers only")))
        })
        .collect()
}

/// Which direction is better for a column or file named `name`, when the
/// name says: times and sizes of costs are lower-is-better, rates higher.
pub fn direction(name: &str) -> Option<crate::model::Better> {
    use crate::model::Better;
    let n = name.to_ascii_lowercase();
    let has = |words: &[&str]| {
        n.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| words.contains(&w))
    };
    if n.contains("/s") || has(&["ops", "rate", "throughput", "bandwidth", "iops", "faults"]) {
        Some(Better::Higher)
    } else if has(&[
        "time", "times", "wall", "elapsed", "real", "user", "sys", "system", "latency", "seconds",
        "secs", "sec", "s", "ms", "us", "ns", "duration", "runtime", "cycles",
    ]) {
        Some(Better::Lower)
    } else {
        None
    }
}

/// A plain decimal number at the start of `rest` (after spaces or tabs)
/// that ends its line: the number and the bytes up to the next line. The
/// common case, parsed in place (fast-float2 rounds exactly as
/// `str::parse` does); anything else is left to the line-by-line path.
fn number_line(rest: &[u8]) -> Option<(f64, usize)> {
    let lead = rest
        .iter()
        .take_while(|&&c| c == b' ' || c == b'\t')
        .count();
    let (v, used) = fast_float2::parse_partial::<f64, _>(&rest[lead..]).ok()?;
    let end = lead + used;
    let next = match (rest.get(end), rest.get(end + 1)) {
        (None, _) => end,
        (Some(b'\n'), _) => end + 1,
        (Some(b'\r'), Some(b'\n')) => end + 2,
        _ => return None,
    };
    (used > 0 && v.is_finite()).then_some((v, next))
}

/// The lines of `text` with their 1-based numbers, without allocating.
fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l))
}

/// One number a line; a first line that is a word (not a number) is the
/// column's name, as in a one-column CSV.
fn lines(name: &str, text: &str) -> Result<(Option<String>, Vec<f64>)> {
    let bytes = text.as_bytes();
    // About 8 bytes a line: reserve once, not by doubling (the pages
    // never written are never touched).
    let mut out = Vec::with_capacity(bytes.len() / 8 + 1);
    let mut column = None;
    let (mut at, mut line) = (0, 0);
    while at < bytes.len() {
        line += 1;
        if let Some((v, next)) = number_line(&bytes[at..]) {
            out.push(v);
            at += next;
            continue;
        }
        let end = bytes[at..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(bytes.len(), |p| at + p);
        // `at` and `end` sit next to newlines: both are char boundaries.
        let t = text[at..end].trim();
        at = end + 1;
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or("");
        let word = first.trim_matches('"');
        if out.is_empty()
            && column.is_none()
            && number(first).is_none()
            && word.starts_with(|c: char| c.is_alphabetic())
            && word.parse::<f64>().is_err()
        {
            column = Some(word.to_string());
            continue;
        }
        out.push(number(first).ok_or_else(|| {
            Error::Input(format!(
                "{name}:{line}: '{first}' is not a number: one number a line, `#` for comments"
            ))
        })?);
    }
    crate::stats::work::pass(bytes.len() / 8);
    Ok((column, out))
}

/// The rows of a CSV file after its header: (line number, the line).
fn rows(text: &str) -> impl Iterator<Item = (usize, &str)> {
    numbered_lines(text)
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .skip(1)
}

/// Cell `col` of a CSV line, trimmed and unquoted ("" past the end).
fn cell(line: &str, col: usize) -> &str {
    line.split(',')
        .nth(col)
        .map(|c| c.trim().trim_matches('"'))
        .unwrap_or("")
}

fn csv(name: &str, text: &str, column: Option<&str>) -> Result<Values> {
    let head = numbered_lines(text)
        .map(|(_, l)| l)
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .ok_or_else(|| Error::Input(format!("{name}: empty file")))?;
    let header: Vec<String> = head
        .split(',')
        .map(|c| c.trim().trim_matches('"').to_string())
        .collect();
    let numeric = |c: usize| {
        rows(text).next().is_some() && rows(text).all(|(_, r)| number(cell(r, c)).is_some())
    };
    let col = match column {
        Some(want) => header
            .iter()
            .position(|h| h == want)
            .or_else(|| {
                want.parse::<usize>()
                    .ok()
                    .filter(|&n| n >= 1 && n <= header.len())
                    .map(|n| n - 1)
            })
            .ok_or_else(|| {
                Error::Input(format!(
                    "{name}: no column '{want}'; the header has: {}",
                    header.join(", ")
                ))
            })?,
        None => (0..header.len()).find(|&c| numeric(c)).ok_or_else(|| {
            Error::Input(format!(
                "{name}: no column holds only numbers; name one with --column (header: {})",
                header.join(", ")
            ))
        })?,
    };
    let mut values = Vec::with_capacity(text.len() / 16 + 1);
    for (line, r) in rows(text) {
        let c = cell(r, col);
        values.push(number(c).ok_or_else(|| {
            Error::Input(format!(
                "{name}:{line}: column '{}' holds '{c}', not a number",
                header[col]
            ))
        })?);
    }
    crate::stats::work::pass(text.len() / 8);
    if values.is_empty() {
        return Err(Error::Input(format!("{name}: a header but no rows")));
    }
    Ok(Values {
        column: header[col].clone(),
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_number_a_line() {
        let v = parse("a", "# t\n1.5\n\n2 extra\n3e2\n", None).unwrap();
        assert_eq!(v.values, vec![1.5, 2.0, 300.0]);
        // Tabs, CR LF, signs, quotes and a header word, as before.
        let v = parse("a", "time\r\n\t-1.5\r\n+2\t# x\r\n\"3\"\n.5\n", None).unwrap();
        assert_eq!(
            (v.column.as_str(), v.values),
            ("time", vec![-1.5, 2.0, 3.0, 0.5])
        );
        for bad in ["1.5e\n", "0x10\n", "1_000\n", "inf\n", "1,5x\n"] {
            assert!(parse("a", bad, None).is_err(), "{bad:?}");
        }
        let Err(Error::Input(e)) = parse("a", "1\nx\n", None) else {
            panic!("a line that is no number is not bad input")
        };
        assert!(e.contains("a:2"), "{e}");
    }

    #[test]
    fn csv_first_numeric_or_named_column() {
        let t = "name,time,rate\nx,1.0,10\ny,2.0,20\n";
        let v = parse("c", t, None).unwrap();
        assert_eq!((v.column.as_str(), v.values), ("time", vec![1.0, 2.0]));
        let v = parse("c", t, Some("rate")).unwrap();
        assert_eq!(v.values, vec![10.0, 20.0]);
        let v = parse("c", t, Some("3")).unwrap();
        assert_eq!(v.column, "rate");
        assert!(
            parse("c", t, Some("nope"))
                .unwrap_err()
                .to_string()
                .contains("time, rate")
        );
    }

    #[test]
    fn json_array() {
        assert_eq!(
            parse("j", " [1, 2.5]", None).unwrap().values,
            vec![1.0, 2.5]
        );
        crate::error::assert_input(parse("j", "[1, \"x\"]", None));
        crate::error::assert_input(parse("j", "{}", None));
        crate::error::assert_input(parse("e", "\n\n", None));
    }
}
