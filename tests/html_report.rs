//! `vmscale report --html` writes one self-contained page that headless
//! Chromium renders with its plots. Skipped (with the reason printed) when
//! chromium is absent, except under CI, where it must run.

use crate::common::{Scratch, ok, render_in_browser};

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
    // Comparison bars and ratio panel, then per run: scaling curve and
    // efficiency.
    assert_eq!(page.matches("<svg").count(), 6, "plots in the page");
    // Full width, a log2 task axis, smooth fits, one marker shape per
    // series, a legend naming what differs, the ratio panel's CIs.
    assert!(page.contains("figure svg { width: 100%"));
    assert!(page.contains("tasks (log2 axis)"));
    assert!(page.contains("run 1: mode=thread") && page.contains("run 2: mode=process"));
    assert!(page.contains("fault/wsec: ratio to run 1"));
    // Unpaired runs of a positive rate: the interval compare used, named.
    assert!(page.contains("95 % interval (ratio of means, Welch t on logs)"));
    assert!(
        page.contains("<polygon"),
        "triangle markers for the second series"
    );
    assert!(page.contains("These runs differ in") && page.contains("config.mode"));
    assert!(
        page.contains("started 20"),
        "a measured run's own start time"
    );
    assert!(page.contains("/proc/vmstat deltas") && page.contains("pgfault"));
    assert!(page.contains("Machine") && page.contains("CPUs"));

    let Some(rendered) = render_in_browser(&s.dir, &html) else {
        return;
    };
    let dom = rendered.dom;
    assert_eq!(
        dom.matches("<svg").count(),
        6,
        "SVG elements in the rendered DOM"
    );
    assert!(
        dom.contains("<polyline") || dom.contains("<path"),
        "plot lines in the DOM"
    );
    assert!(dom.contains("<rect"), "bars in the DOM");
}
