//! Markdown: titles as headings, tables as pipe tables, paragraphs kept
//! verbatim in code fences (they are column-aligned text).

use super::{Align, Block, Exporter, KeyValue, Report, Table};

pub struct Markdown;

fn cell(s: &str) -> String {
    s.trim().replace('|', "\\|")
}

/// A pipe table. Columns with no text at all (a text layout's spacer or
/// an unused flag column) are left out.
pub fn table(t: &Table) -> String {
    let keep = t.filled_columns();
    // Markdown has one header line: join multi-line headers per column.
    let head: Vec<String> = keep
        .iter()
        .map(|&i| {
            t.header
                .iter()
                .filter_map(|h| h.get(i))
                .map(|s| s.trim())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mut out = format!(
        "| {} |\n",
        head.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | ")
    );
    let rule: Vec<&str> = keep
        .iter()
        .map(|&i| match t.align.get(i) {
            Some(Align::Right) => "---:",
            _ => "---",
        })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for r in &t.rows {
        let cells: Vec<String> = keep
            .iter()
            .map(|&i| cell(r.get(i).map(String::as_str).unwrap_or("")))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

fn heading(title: &str) -> String {
    if title.is_empty() {
        String::new()
    } else {
        // A heading is one line: a title wrapped for the terminal is joined.
        let one: Vec<&str> = title.split_whitespace().collect();
        format!("### {}\n\n", one.join(" "))
    }
}

/// Named values as a list under their title.
pub fn key_value(kv: &KeyValue) -> String {
    let mut out = heading(&kv.title);
    for (k, v) in &kv.pairs {
        out.push_str(&format!("- {}: {}\n", k.trim(), v.trim()));
    }
    out
}

/// The blocks of a document, a blank line apart.
pub fn blocks(blocks: &[Block]) -> String {
    let mut parts = Vec::new();
    for b in blocks {
        parts.push(match b {
            Block::Title(t) => format!("### {t}\n"),
            // Blank lines that space the text layout mean nothing in a fence.
            Block::Paragraph(p) if p.trim().is_empty() => continue,
            Block::Paragraph(p) => {
                format!("```\n{}\n```\n", p.trim_start_matches('\n').trim_end())
            }
            Block::Table(t) => heading(&t.title) + &table(t),
            Block::KeyValue(kv) => key_value(kv),
            Block::Blank => continue,
        });
    }
    parts.join("\n")
}

impl Exporter for Markdown {
    fn export(&self, report: &Report) -> crate::error::Result<String> {
        Ok(blocks(&report.blocks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_table_with_joined_header() {
        let t = Table {
            header: vec![
                vec!["".into(), "run 1".into()],
                vec!["stat".into(), "base".into()],
            ],
            align: vec![Align::Left, Align::Right],
            rows: vec![vec!["Amean".into(), "1|2".into()]],
            ..Table::default()
        };
        assert_eq!(
            table(&t),
            "| stat | run 1 base |\n| --- | ---: |\n| Amean | 1\\|2 |\n"
        );
    }

    #[test]
    fn paragraph_fence_drops_spacing_blank_lines() {
        let r = Report {
            text: None,
            blocks: vec![Block::Paragraph("\n  a  1\nb\n\n".into())],
            records: Default::default(),
            data: serde_json::Value::Null,
        };
        assert_eq!(Markdown.export(&r).unwrap(), "```\n  a  1\nb\n```\n");
    }
}
