//! A report's blocks as HTML: the same tables `show` prints, as `<table>`s
//! with their titles as captions, paragraphs as preformatted text.

use super::svg::escape;
use crate::report::export::{Align, Block, Table};

fn table(t: &Table) -> String {
    let keep = t.filled_columns();
    let cell = |tag: &str, row: &[String], i: usize| {
        let text = row.get(i).map_or("", |c| c.trim());
        let left = t.align.get(i) != Some(&Align::Right) && tag == "td";
        format!(
            "<{tag}{}>{}</{tag}>",
            if left {
                " style=\"text-align:left\""
            } else {
                ""
            },
            escape(text)
        )
    };
    let mut out = String::from("<table class=\"num\">\n");
    if !t.title.is_empty() {
        out.push_str(&format!("<caption>{}</caption>\n", escape(&t.title)));
    }
    for (tag, rows) in [("th", &t.header), ("td", &t.rows)] {
        for r in rows {
            let cells: String = keep.iter().map(|&i| cell(tag, r, i)).collect();
            out.push_str(&format!("<tr>{cells}</tr>\n"));
        }
    }
    out.push_str("</table>\n");
    out
}

/// `blocks` as HTML; titles become `<h4>`.
pub fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        match b {
            Block::Title(t) => out.push_str(&format!("<h4>{}</h4>\n", escape(t))),
            Block::Paragraph(p) if p.trim().is_empty() => {}
            Block::Paragraph(p) => out.push_str(&format!(
                "<pre>{}</pre>\n",
                escape(p.trim_start_matches('\n').trim_end())
            )),
            Block::Table(t) => out.push_str(&table(t)),
            Block::KeyValue(kv) => {
                let rows = kv
                    .pairs
                    .iter()
                    .map(|(k, v)| vec![k.clone(), v.clone()])
                    .collect();
                out.push_str(&table(&Table {
                    title: kv.title.clone(),
                    align: vec![Align::Left, Align::Right],
                    rows,
                    ..Table::default()
                }));
            }
            Block::Blank => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::export::KeyValue;

    #[test]
    fn every_block_kind_as_html() {
        let t = Table {
            title: "a < b".into(),
            header: vec![vec!["k".into(), "v".into(), "".into()]],
            align: vec![Align::Left, Align::Right],
            rows: vec![vec!["x".into(), " 1".into()]],
            layout: None,
        };
        let out = render(&[
            Block::Title("run 1".into()),
            Block::Paragraph("\nnote\n".into()),
            Block::Blank,
            Block::Table(t),
            Block::KeyValue(KeyValue {
                title: String::new(),
                pairs: vec![("Time".into(), "2".into())],
                widths: None,
            }),
        ]);
        assert_eq!(
            out,
            "<h4>run 1</h4>\n<pre>note</pre>\n<table class=\"num\">\n<caption>a &lt; b</caption>\n\
             <tr><th>k</th><th>v</th></tr>\n<tr><td style=\"text-align:left\">x</td><td>1</td></tr>\n\
             </table>\n<table class=\"num\">\n<tr><td style=\"text-align:left\">Time</td><td>2</td></tr>\n\
             </table>\n"
        );
    }
}
