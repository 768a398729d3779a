//! Plain text for a terminal or a mail: aligned tables, no decoration.

use super::{Align, Block, Exporter, Report, Table};

pub struct Text;

/// Renders a table with columns two spaces apart, trailing blanks trimmed.
pub fn table(t: &Table) -> String {
    let ncol = t.columns();
    let mut width = vec![0usize; ncol];
    for row in t.header.iter().chain(&t.rows) {
        for (i, c) in row.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in t.header.iter().chain(&t.rows) {
        let mut line = String::new();
        for (i, w) in width.iter().enumerate() {
            let c = row.get(i).map(String::as_str).unwrap_or("");
            if i > 0 {
                line.push_str("  ");
            }
            match t.align.get(i).copied().unwrap_or(Align::Left) {
                Align::Left => line.push_str(&format!("{c:<w$}")),
                Align::Right => line.push_str(&format!("{c:>w$}")),
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

impl Exporter for Text {
    fn export(&self, report: &Report) -> Result<String, String> {
        if let Some(t) = &report.text {
            return Ok(t.clone());
        }
        let mut out = String::new();
        for (i, b) in report.blocks.iter().enumerate() {
            if i > 0 && matches!(b, Block::Title(_)) {
                out.push('\n');
            }
            match b {
                Block::Title(t) => {
                    out.push_str(t);
                    out.push('\n');
                }
                Block::Paragraph(p) => {
                    out.push_str(p);
                    if !p.ends_with('\n') {
                        out.push('\n');
                    }
                }
                Block::Table(t) => out.push_str(&table(t)),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let t = Table {
            header: vec![vec!["a".into(), "value".into()]],
            align: vec![Align::Left, Align::Right],
            rows: vec![vec!["long name".into(), "1".into()]],
        };
        assert_eq!(table(&t), "a          value\nlong name      1\n");
    }
}
