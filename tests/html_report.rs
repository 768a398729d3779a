//! `vmscale report --html` writes one self-contained page that headless
//! Chromium renders with its plots. Skipped (with the reason printed) when
//! chromium is absent, except under CI, where it must run.

mod common;

use common::{Scratch, ok, render_in_browser};

#[test]
fn html_report_renders_with_plots() {
    let s = Scratch::new("html");
    ok(&s.vmscale(&[
        "run",
        "pft",
        "--tasks",
        "1,2",
        "--size",
        "16M",
        "--reps",
        "2",
        "--populate",
    ]));
    ok(&s.vmscale(&[
        "run", "pft", "--tasks", "1-3", "--size", "16M", "--reps", "2", "--mode", "process",
    ]));
    let html = s.dir.join("report.html");
    let html_arg = html.to_string_lossy().into_owned();
    ok(&s.vmscale(&["report", "1", "2", "--html", &html_arg]));

    // Self-contained: inline SVG, no script, nothing fetched.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        !page.contains("<script"),
        "the page must need no JavaScript"
    );
    for fetch in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(
            !page.contains(fetch),
            "the page must fetch nothing: found {fetch}"
        );
    }
    // Comparison bars, then per run: scaling curve and efficiency.
    assert_eq!(page.matches("<svg").count(), 5, "plots in the page");
    assert!(page.contains("/proc/vmstat deltas") && page.contains("pgfault"));
    assert!(page.contains("Machine") && page.contains("CPUs"));

    let Some(rendered) = render_in_browser(&s.dir, &html) else {
        return;
    };
    let dom = rendered.dom;
    assert_eq!(
        dom.matches("<svg").count(),
        5,
        "SVG elements in the rendered DOM"
    );
    assert!(
        dom.contains("<polyline") || dom.contains("<path"),
        "plot lines in the DOM"
    );
    assert!(dom.contains("<rect"), "bars in the DOM");
}
