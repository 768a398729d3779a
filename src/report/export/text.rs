//! Plain text for a terminal or a mail: aligned tables, no decoration.

use super::{Align, Block, Exporter, KeyValue, Layout, Report, Table};
use crate::text::clip;

pub struct Text;

/// Renders a table: in its fixed layout when it has one, else with
/// columns two spaces apart, trailing blanks trimmed; the title on the
/// line above.
pub fn table(t: &Table) -> String {
    if let Some(l) = &t.layout {
        return fixed(t, l);
    }
    let ncol = t.columns();
    let mut width = vec![0usize; ncol];
    for row in t.header.iter().chain(&t.rows) {
        for (i, c) in row.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let mut out = title(&t.title);
    for row in t.header.iter().chain(&t.rows) {
        let mut line = String::new();
        for (i, w) in width.iter().enumerate() {
            let c = row.get(i).map(String::as_str).unwrap_or("");
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(&pad(c, *w, t.align.get(i).copied()));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn title(t: &str) -> String {
    if t.is_empty() {
        String::new()
    } else {
        format!("{t}\n")
    }
}

fn pad(c: &str, w: usize, align: Option<Align>) -> String {
    match align.unwrap_or(Align::Left) {
        Align::Left => format!("{c:<w$}"),
        Align::Right => format!("{c:>w$}"),
    }
}

/// A table in its historical columns (see [`Layout`]).
fn fixed(t: &Table, l: &Layout) -> String {
    let line = |row: &Vec<String>| {
        let mut s = String::new();
        if let ([cell], true) = (row.as_slice(), l.columns.len() > 1) {
            s.push_str(l.columns[0].0);
            s.push_str(cell);
        } else {
            for (i, c) in row.iter().enumerate() {
                let (sep, w) = l.columns.get(i).copied().unwrap_or(("", 0));
                s.push_str(sep);
                match l.fit {
                    Some((col, room)) if col == i => {
                        s.push_str(&pad(&clip(c, room), w, t.align.get(i).copied()))
                    }
                    _ => s.push_str(&pad(c, w, t.align.get(i).copied())),
                }
            }
        }
        s.push('\n');
        s
    };
    let mut out = match &l.text_header {
        Some(h) => h.clone(),
        None if l.text_title => title(&t.title) + &t.header.iter().map(line).collect::<String>(),
        None => t.header.iter().map(line).collect(),
    };
    out.extend(t.rows.iter().map(line));
    out
}

/// Named values, one a line.
pub fn key_value(kv: &KeyValue) -> String {
    let mut out = title(&kv.title);
    for (k, v) in &kv.pairs {
        match kv.widths {
            Some((kw, vw)) => out.push_str(&format!("{k:<kw$} {v:>vw$}\n")),
            None => out.push_str(&format!("{k}: {v}\n")),
        }
    }
    out
}

/// The blocks of a document, one after another.
pub fn blocks(blocks: &[Block]) -> String {
    let mut out = String::new();
    for (i, b) in blocks.iter().enumerate() {
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
            Block::KeyValue(kv) => out.push_str(&key_value(kv)),
            Block::Blank => out.push('\n'),
        }
    }
    out
}

impl Exporter for Text {
    fn export(&self, report: &Report) -> crate::error::Result<String> {
        match &report.text {
            Some(t) => Ok(t.clone()),
            None => Ok(blocks(&report.blocks)),
        }
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
            ..Table::default()
        };
        assert_eq!(table(&t), "a          value\nlong name      1\n");
    }
}
