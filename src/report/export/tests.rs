//! Every exporter on every block kind.

use super::*;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// One block of each kind, a free table and a fixed-layout one.
fn report() -> Report {
    Report {
        text: None,
        blocks: vec![
            Block::Title("run 1".into()),
            Block::Paragraph("about\n".into()),
            Block::Blank,
            Block::Table(Table {
                title: "free".into(),
                header: vec![strings(&["k", "value"])],
                align: vec![Align::Left, Align::Right],
                rows: vec![strings(&["long name", "1"])],
                layout: None,
            }),
            Block::Table(Table {
                title: "fixed".into(),
                header: vec![strings(&["Thr", "rate", ""])],
                align: vec![Align::Right, Align::Right, Align::Left],
                rows: vec![
                    strings(&["1", "2.5", " *"]),
                    strings(&["warning: a note under the row"]),
                ],
                layout: Some(Layout::spaced(&[4, 6, 0]).sep(2, "").untitled()),
            }),
            Block::KeyValue(KeyValue {
                title: "median:".into(),
                pairs: vec![("Time".into(), "1.50".into())],
                widths: Some((6, 5)),
            }),
            Block::Title("next".into()),
        ],
        records: Records {
            columns: strings(&["figure", "value"]),
            rows: vec![strings(&["a,b", "1"])],
        },
        data: serde_json::json!({"id": 1}),
    }
}

#[test]
fn text_prints_each_block_kind() {
    let out = Text.export(&report()).unwrap();
    assert_eq!(
        out,
        "run 1\nabout\n\nfree\nk          value\nlong name      1\n \
         Thr   rate\n   1    2.5 *\nwarning: a note under the row\n\
         median:\nTime    1.50\n\nnext\n"
    );
}

#[test]
fn markdown_renders_each_block_kind_without_spacing() {
    let out = Markdown.export(&report()).unwrap();
    assert_eq!(
        out,
        "### run 1\n\n```\nabout\n```\n\n### free\n\n| k | value |\n| --- | ---: |\n\
         | long name | 1 |\n\n### fixed\n\n| Thr | rate |  |\n| ---: | ---: | --- |\n\
         | 1 | 2.5 | * |\n| warning: a note under the row |  |  |\n\n\
         ### median:\n\n- Time: 1.50\n\n### next\n"
    );
}

#[test]
fn csv_and_json_write_records_and_data_whatever_the_blocks() {
    let r = report();
    assert_eq!(Csv.export(&r).unwrap(), "figure,value\n\"a,b\",1\n");
    assert_eq!(Json.export(&r).unwrap(), "{\n  \"id\": 1\n}\n");
}

#[test]
fn a_given_text_wins_over_the_blocks_in_text_only() {
    let mut r = report();
    r.text = Some("as printed\n".into());
    assert_eq!(Text.export(&r).unwrap(), "as printed\n");
    assert!(Markdown.export(&r).unwrap().contains("### fixed"));
}

#[test]
fn text_cuts_the_fitted_column_and_markdown_keeps_it_whole() {
    let t = Table {
        title: "t".into(),
        header: vec![strings(&["n", "name"])],
        align: vec![Align::Right, Align::Left],
        rows: vec![strings(&["1", "a_long_symbol_name"])],
        layout: Some(Layout {
            fit: Some((1, 6)),
            ..Layout::spaced(&[2, 0]).sep(1, "  ")
        }),
    };
    assert_eq!(text::table(&t), "t\n n  name\n 1  a_lon~\n");
    assert!(markdown::table(&t).contains("| 1 | a_long_symbol_name |"));
}
