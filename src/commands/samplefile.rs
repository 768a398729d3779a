//! Plain sample files for `compare --files`, as ministat reads them: one
//! number a line (blank lines and `#` comments skipped), CSV with a header
//! line (a column chosen by name or 1-based number, else the first
//! numeric one), or a JSON array of numbers. A file that cannot be read
//! as one is bad input naming the file, the line and the fix.

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

/// One number a line; a first line that is a word (not a number) is the
/// column's name, as in a one-column CSV.
fn lines(name: &str, text: &str) -> Result<(Option<String>, Vec<f64>)> {
    let mut out = Vec::new();
    let mut column = None;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
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
                "{name}:{}: '{first}' is not a number: one number a line, `#` for comments",
                i + 1
            ))
        })?);
    }
    Ok((column, out))
}

fn split(line: &str) -> Vec<String> {
    line.split(',')
        .map(|c| c.trim().trim_matches('"').to_string())
        .collect()
}

fn csv(name: &str, text: &str, column: Option<&str>) -> Result<Values> {
    let mut it = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (_, head) = it
        .next()
        .ok_or_else(|| Error::Input(format!("{name}: empty file")))?;
    let header = split(head);
    let rows: Vec<(usize, Vec<String>)> = it.map(|(i, l)| (i + 1, split(l))).collect();
    let numeric = |c: usize| {
        !rows.is_empty()
            && rows
                .iter()
                .all(|(_, r)| r.get(c).and_then(|s| number(s)).is_some())
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
    let mut values = Vec::new();
    for (line, r) in &rows {
        let cell = r.get(col).map(String::as_str).unwrap_or("");
        values.push(number(cell).ok_or_else(|| {
            Error::Input(format!(
                "{name}:{line}: column '{}' holds '{cell}', not a number",
                header[col]
            ))
        })?);
    }
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
        assert!(parse("j", "[1, \"x\"]", None).is_err());
        assert!(parse("j", "{}", None).is_err());
        assert!(parse("e", "\n\n", None).is_err());
    }
}
