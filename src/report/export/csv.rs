//! CSV (RFC 4180): the report's flat records under a header line.

use super::{Exporter, Report};

pub struct Csv;

/// Quotes a field when it holds a comma, quote or line break.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn line(cells: &[String]) -> String {
    let mut l = cells.iter().map(|c| field(c)).collect::<Vec<_>>().join(",");
    l.push('\n');
    l
}

impl Exporter for Csv {
    fn export(&self, report: &Report) -> crate::error::Result<String> {
        let r = &report.records;
        let mut out = line(&r.columns);
        for row in &r.rows {
            out.push_str(&line(row));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(field("a"), "a");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
