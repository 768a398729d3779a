//! `report --html` for the micro-benchmarks: tiny real c2c, latency and
//! colour runs, then the page's heat-map cells, cache markers and colour
//! bars are counted against what the stored runs say (CPUs measured, cache
//! sizes in the snapshot, colours). Headless Chromium must render it when
//! installed. The colour run is skipped, with the reason printed, when the
//! kernel refuses it (PFNs need CAP_SYS_ADMIN).

use crate::common;

use crate::common::{Scratch, json, ok, render_in_browser, stderr};
use serde_json::Value;

fn count(page: &str, class: &str) -> usize {
    page.matches(&format!("class=\"{class}\"")).count()
}

/// Data and unified cache levels (deduplicated) whose size lies in [lo, hi].
fn caches_between(machine: &Value, lo: u64, hi: u64) -> usize {
    let mut seen: Vec<(u64, String)> = Vec::new();
    for c in machine["caches"].as_array().into_iter().flatten() {
        let kind = c["kind"].as_str().unwrap_or("").to_string();
        let (Some(level), Some(size)) = (c["level"].as_u64(), c["size_bytes"].as_u64()) else {
            continue;
        };
        if kind != "Instruction"
            && (lo..=hi).contains(&size)
            && !seen.contains(&(level, kind.clone()))
        {
            seen.push((level, kind));
        }
    }
    seen.len()
}

#[test]
fn micro_plots_in_the_html_report() {
    let s = Scratch::new("html-micro");
    ok(&s.vmscale(&[
        "run",
        "c2c",
        "--rounds",
        "100",
        "--batches",
        "5",
        "--reps",
        "2",
    ]));
    ok(&s.vmscale(&[
        // 2M: THP cases start at the huge-page size.
        "run", "latency", "--max", "2M", "--reps", "2", "--loads", "20000",
    ]));
    let colour = s.vmscale(&[
        "run",
        "colour",
        "--tasks",
        "2",
        "--size-per-task",
        "4M",
        "--reps",
        "2",
    ]);
    let with_colour = colour.status.success();
    if !with_colour {
        common::skip(&format!(
            "colour histograms: run colour refused: {}",
            stderr(&colour).trim()
        ));
    }
    let runs: Vec<&str> = if with_colour {
        vec!["1", "2", "3"]
    } else {
        vec!["1", "2"]
    };
    let html = s.dir.join("micro.html");
    let html_arg = html.to_string_lossy().into_owned();
    let mut args = vec!["report"];
    args.extend(&runs);
    args.extend(["--html", &html_arg]);
    ok(&s.vmscale(&args));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("<script"),
        "the page must need no JavaScript"
    );

    // c2c: one grid per variant, both halves of every measured pair.
    let c2c = json(&s.vmscale(&["show", "1", "--json"]));
    let cpus = c2c["meta"]["config"]["cpus"].as_array().unwrap().len();
    let variants = c2c["cases"].as_array().unwrap().len();
    assert!(cpus >= 2);
    assert_eq!(
        count(&page, "heatmap"),
        variants,
        "one heat map per variant"
    );
    assert_eq!(count(&page, "cell"), variants * cpus * (cpus - 1));
    assert_eq!(count(&page, "diag"), variants * cpus);
    let values = if cpus <= 16 {
        variants * cpus * (cpus - 1)
    } else {
        0
    };
    assert_eq!(
        count(&page, "cell-value"),
        values,
        "values in small grids only"
    );
    assert_eq!(count(&page, "scale"), variants, "a colour scale per grid");

    // latency: a marker per cache size inside the sizes measured.
    let lat = json(&s.vmscale(&["show", "2", "--json"]));
    let sizes: Vec<u64> = lat["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            c["case"]["variant"]
                .as_str()?
                .split_once('/')?
                .1
                .parse()
                .ok()
        })
        .collect();
    let (lo, hi) = (*sizes.iter().min().unwrap(), *sizes.iter().max().unwrap());
    assert_eq!(hi, 2 << 20);
    assert_eq!(
        count(&page, "cache-marker"),
        caches_between(&lat["meta"]["machine"], lo, hi),
        "cache markers"
    );
    assert!(
        page.contains("base pages") && page.contains("thp pages"),
        "a line per page kind"
    );
    assert!(page.contains("latency against working set"));

    // colour: one panel per task, one bar per colour, one expectation line each.
    let mut svgs = variants + 1;
    if with_colour {
        let col = json(&s.vmscale(&["show", "3", "--json"]));
        let colours = col["meta"]["config"]["colours"].as_u64().unwrap() as usize;
        assert!(colours >= 1);
        assert_eq!(count(&page, "colour-histograms"), 1);
        assert_eq!(count(&page, "task"), 2);
        assert_eq!(count(&page, "bar"), 2 * colours);
        assert_eq!(count(&page, "expect"), 2);
        let labels = if colours > 64 { 2 * 2 } else { 2 * colours };
        assert!(count(&page, "colour-label") <= labels);
        svgs += 1;
    }
    assert_eq!(page.matches("<svg").count(), svgs, "plots in the page");

    let Some(rendered) = render_in_browser(&s.dir, &html) else {
        return;
    };
    let dom = rendered.dom;
    assert_eq!(
        dom.matches("<svg").count(),
        svgs,
        "SVGs in the rendered DOM"
    );
    assert_eq!(count(&dom, "cell"), variants * cpus * (cpus - 1));
}
