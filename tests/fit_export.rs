//! `vmscale fit` in every output format, end to end.
//!
//! The text is checked byte for byte against the layout `fit` printed
//! before it moved onto the exporters ([`old_text`], a copy of that code),
//! filled from the same binary's JSON, so no optimiser-dependent number is
//! written into the test. CSV figures are compared with the JSON ones.

use crate::common::{Scratch, json, ok, stderr};
use serde_json::Value;

/// USL points (σ 0.08, κ 0.002, λ 500) with a fixed ±2 % wobble, 3 at each
/// N in 1..=12: the fit has a peak, standard errors and CIs.
fn noisy_pairs() -> String {
    let mut out = String::from("# N X\n");
    for n in 1..=12 {
        for k in [-1.0, 0.0, 1.0] {
            let nf = n as f64;
            let x = 500.0 * nf / (1.0 + 0.08 * (nf - 1.0) + 0.002 * nf * (nf - 1.0));
            let wobble = 1.0 + 0.02 * k * if n % 2 == 0 { 1.0 } else { 0.7 };
            out.push_str(&format!("{n} {}\n", x * wobble));
        }
    }
    out
}

/// Linear data: σ and κ both land on the bound 0, no peak.
fn linear_pairs() -> String {
    (1..=8)
        .flat_map(|n| [1.01, 0.99].map(|f| format!("{n} {}\n", 100.0 * n as f64 * f)))
        .collect()
}

// --- the text layout as it was, reading the JSON -------------------------

fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if v.fract() == 0.0 && a < 1e7 {
        format!("{v:.0}")
    } else if !(1e-3..1e7).contains(&a) {
        format!("{v:.4e}")
    } else {
        let decimals = (4 - a.log10().floor() as i32).clamp(0, 6) as usize;
        format!("{v:.decimals$}")
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn pair(v: &Value) -> Option<(f64, f64)> {
    v.as_array().map(|a| (f(&a[0]), f(&a[1])))
}

fn row(name: &str, e: &Value) -> String {
    let (se, ci) = match (e["se"].as_f64(), pair(&e["ci95"])) {
        (Some(se), Some((lo, hi))) => (num(se), format!("{} .. {}", num(lo), num(hi))),
        _ if e["at_bound"] == true => ("-".into(), "held at the bound 0".into()),
        _ => ("-".into(), "-".into()),
    };
    format!(
        "  {name:<20} {:>12} {:>12}   {ci}\n",
        num(f(&e["value"])),
        se
    )
}

/// The old text as printed now: warnings on stderr, every line wrapped to
/// 80 columns (stdout, stderr).
fn printed(r: &Value) -> (String, String) {
    let old = old_text(r);
    let (warnings, body): (Vec<&str>, Vec<&str>) = old
        .split_inclusive('\n')
        .partition(|l| l.starts_with("warning:"));
    let wrap = |t: Vec<&str>| vmscale::commands::output::wrap(&t.concat(), 80);
    (wrap(body), wrap(warnings))
}

fn old_text(r: &Value) -> String {
    let fit = &r["fit"];
    let unit = r["unit"].as_str().unwrap();
    let mut out = format!(
        "USL fit of {} ({}){} from {}\n",
        r["figure"].as_str().unwrap(),
        unit,
        r["variant"]
            .as_str()
            .map(|v| format!(", variant {v}"))
            .unwrap_or_default(),
        r["source"].as_str().unwrap()
    );
    out.push_str("X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)), sigma, kappa >= 0\n");
    out.push_str(&format!(
        "{} samples at {} distinct N ({} .. {})\n\n",
        fit["points"],
        fit["distinct_n"],
        num(f(&fit["min_n"])),
        num(f(&fit["max_n"]))
    ));
    out.push_str(&format!(
        "  {:<20} {:>12} {:>12}   95 % CI\n",
        "parameter", "estimate", "std. error"
    ));
    out.push_str(&row("sigma (contention)", &fit["sigma"]));
    out.push_str(&row("kappa (coherency)", &fit["kappa"]));
    out.push_str(&row("lambda (X at N=1)", &fit["lambda"]));
    out.push('\n');
    match pair(&fit["peak"]) {
        Some((n, x)) => out.push_str(&format!(
            "peak: N* = sqrt((1 - sigma) / kappa) = {}, X(N*) = {} {}\n",
            num(n),
            num(x),
            unit
        )),
        None => out.push_str("peak: none (kappa = 0: X keeps rising toward lambda / sigma)\n"),
    }
    out.push_str(&format!(
        "residual standard error: {} {} on {} degrees of freedom\n",
        num(f(&fit["residual_se"])),
        unit,
        fit["df"]
    ));
    let ex = r["extrapolation"].as_array().unwrap();
    if !ex.is_empty() {
        out.push_str(&format!(
            "\n{:>8} {:>14} {:>29}\n",
            "N", "X(N)", "95 % CI of the curve"
        ));
        for p in ex {
            let ci = pair(&p["ci95"])
                .map(|(lo, hi)| format!("{} .. {}", num(lo), num(hi)))
                .unwrap_or_else(|| "-".into());
            out.push_str(&format!(
                "{:>8} {:>14} {:>29}{}\n",
                num(f(&p["n"])),
                num(f(&p["x"])),
                ci,
                if p["beyond_data"] == true {
                    "  (extrapolated)"
                } else {
                    ""
                }
            ));
        }
    }
    // Each warning folded to 80 columns under a hanging indent.
    let fold = textwrap::Options::new(80)
        .initial_indent("warning: ")
        .subsequent_indent("  ");
    for w in r["warnings"].as_array().unwrap() {
        out.push_str(&(textwrap::fill(w.as_str().unwrap(), &fold) + "\n"));
    }
    out
}

// --- the tests -----------------------------------------------------------

fn write(s: &Scratch, name: &str, text: &str) -> String {
    let p = s.dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn text_is_the_layout_fit_always_printed() {
    let s = Scratch::new("fit-text");
    let noisy = write(&s, "noisy.txt", &noisy_pairs());
    let linear = write(&s, "linear.txt", &linear_pairs());
    for args in [
        vec!["fit", "--file", &noisy],
        vec!["fit", "--file", &noisy, "--extrapolate", "4,64"],
        vec!["fit", "--file", &linear, "--extrapolate", "2"],
    ] {
        let o = s.vmscale(&args);
        let text = ok(&o);
        let mut with_json = args.clone();
        with_json.push("--json");
        let data = json(&s.vmscale(&with_json));
        assert_eq!((text, stderr(&o)), printed(&data), "{args:?}");
    }
    // The parts that do not depend on the optimiser, written out.
    let text = ok(&s.vmscale(&["fit", "--file", &noisy]));
    let expect_head = format!(
        "USL fit of X () from {noisy}\n\
         X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)), sigma, kappa >= 0\n\
         36 samples at 12 distinct N (1 .. 12)\n\n\
         \x20 parameter                estimate   std. error   95 % CI\n"
    );
    let expect_head = vmscale::commands::output::wrap(&expect_head, 80);
    assert!(text.starts_with(&expect_head), "{text}");
    assert!(
        text.contains("\n       N           X(N)          95 % CI of the curve\n"),
        "{text}"
    );
    let linear_text = ok(&s.vmscale(&["fit", "--file", &linear]));
    assert!(
        linear_text
            .contains("\n  sigma (contention)              0            -   held at the bound 0\n"),
        "{linear_text}"
    );
}

#[test]
fn text_of_a_run_keeps_unit_and_variant() {
    let s = Scratch::new("fit-run-text");
    let mut csv = String::from("tasks,processes,processes_idle,threads,threads_idle,linear\n");
    for n in 1..=6u32 {
        let nf = n as f64;
        let p = 5e5 * nf / (1.0 + 0.05 * (nf - 1.0) + 0.002 * nf * (nf - 1.0));
        let t = 5e5 * nf / (1.0 + 0.2 * (nf - 1.0) + 0.01 * nf * (nf - 1.0));
        let w = if n % 2 == 0 { 1.01 } else { 0.99 };
        csv.push_str(&format!(
            "{n},{:.0},1.0,{:.0},1.0,{}\n",
            p * w,
            t / w,
            500000 * n
        ));
    }
    let file = write(&s, "page_fault1.csv", &csv);
    ok(&s.vmscale(&["import", &file]));
    for variant in ["process", "thread"] {
        let args = ["fit", "last", "--variant", variant, "--extrapolate", "3,12"];
        let o = s.vmscale(&args);
        let text = ok(&o);
        let mut with_json = args.to_vec();
        with_json.push("--json");
        let data = json(&s.vmscale(&with_json));
        assert_eq!((text.clone(), stderr(&o)), printed(&data), "{variant}");
        assert!(
            text.starts_with(&format!(
                "USL fit of ops/s (ops/s), variant {variant} from run 1 (wis)\n"
            )),
            "{text}"
        );
    }
}

#[test]
fn markdown_has_the_tables() {
    let s = Scratch::new("fit-md");
    let noisy = write(&s, "noisy.txt", &noisy_pairs());
    let md = ok(&s.vmscale(&["fit", "--file", &noisy, "--markdown"]));
    assert!(md.starts_with("### USL fit of X () from "), "{md}");
    assert!(
        md.contains(
            "| parameter | estimate | std. error | 95 % CI |\n| --- | ---: | ---: | --- |\n\
             | sigma (contention) | "
        ),
        "{md}"
    );
    assert!(
        md.contains("| N | X(N) | 95 % CI of the curve |  |\n"),
        "{md}"
    );
    // Four predictions by default (2x .. 16x the largest N), all past it.
    assert_eq!(md.matches("| (extrapolated) |").count(), 4, "{md}");
    assert!(
        md.contains("```\nwarning: extrapolating to N = 192"),
        "{md}"
    );
}

#[test]
fn csv_has_one_record_per_parameter_and_prediction() {
    let s = Scratch::new("fit-csv");
    let noisy = write(&s, "noisy.txt", &noisy_pairs());
    let args = ["fit", "--file", &noisy, "--extrapolate", "4,64", "--csv"];
    let csv = ok(&s.vmscale(&args));
    let data = json(&s.vmscale(&["fit", "--file", &noisy, "--extrapolate", "4,64", "--json"]));
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        lines[0],
        [
            "kind",
            "name",
            "n",
            "value",
            "stderr",
            "ci95_low",
            "ci95_high",
            "note"
        ]
    );
    assert!(lines.iter().all(|l| l.len() == 8), "{csv}");
    let kinds: Vec<&str> = lines[1..].iter().map(|l| l[0]).collect();
    assert_eq!(
        kinds,
        [
            "parameter",
            "parameter",
            "parameter",
            "peak",
            "prediction",
            "prediction"
        ],
        "{csv}"
    );
    let num = |s: &str| s.parse::<f64>().unwrap();
    let fit = &data["fit"];
    for (l, name) in lines[1..4].iter().zip(["sigma", "kappa", "lambda"]) {
        assert_eq!(l[1], name);
        assert!(close(num(l[3]), f(&fit[name]["value"])), "{csv}");
        assert!(close(num(l[4]), f(&fit[name]["se"])), "{csv}");
        assert!(close(num(l[5]), f(&fit[name]["ci95"][0])), "{csv}");
        assert!(close(num(l[6]), f(&fit[name]["ci95"][1])), "{csv}");
    }
    assert!(close(num(lines[4][2]), f(&fit["peak"][0])), "{csv}");
    assert!(close(num(lines[4][3]), f(&fit["peak"][1])), "{csv}");
    for (l, p) in lines[5..]
        .iter()
        .zip(data["extrapolation"].as_array().unwrap())
    {
        assert!(close(num(l[2]), f(&p["n"])) && close(num(l[3]), f(&p["x"])));
    }
    assert_eq!((lines[5][2], lines[5][7]), ("4", ""));
    assert_eq!((lines[6][2], lines[6][7]), ("64", "extrapolated"));

    // Parameters at the bound: no standard error, said so, and an interval
    // from 0 up to what the full model allows there.
    let linear = write(&s, "linear.txt", &linear_pairs());
    let csv = ok(&s.vmscale(&["fit", "--file", &linear, "--csv"]));
    let sigma: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with("parameter,sigma,"))
        .expect("sigma record")
        .split(',')
        .collect();
    assert_eq!(
        (sigma[3], sigma[4], sigma[5], sigma[7]),
        ("0", "", "0", "held at the bound 0"),
        "{csv}"
    );
    assert!(sigma[6].parse::<f64>().is_ok_and(|hi| hi > 0.0), "{csv}");
    assert!(!csv.contains("\npeak,"), "{csv}");
}

#[test]
fn json_parses_and_formats_exclude_each_other() {
    let s = Scratch::new("fit-json");
    let noisy = write(&s, "noisy.txt", &noisy_pairs());
    let data = json(&s.vmscale(&["fit", "--file", &noisy, "--json"]));
    assert_eq!(data["source"], noisy.as_str());
    assert_eq!(data["fit"]["points"], 36);
    assert_eq!(data["fit"]["distinct_n"], 12);
    assert_eq!(data["extrapolation"].as_array().unwrap().len(), 4);
    for pair in [
        ["--markdown", "--json"],
        ["--csv", "--json"],
        ["--markdown", "--csv"],
    ] {
        let o = s.vmscale(&["fit", "--file", &noisy, pair[0], pair[1]]);
        assert_eq!(o.status.code(), Some(2), "{pair:?}");
    }
}
