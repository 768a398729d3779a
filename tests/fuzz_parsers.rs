//! Property tests (bounded, part of the normal suite) of everything that
//! reads untrusted text: the importers, the sample-file parser, the `N X`
//! pairs of `fit`, `reproduce`'s reader of robot reports (seeded with the
//! reports of tests/fixtures/reproduce, cut, quoted and mangled), and the
//! size, duration, percent and task-list parsers.
//! Properties: no panic on any input, and no non-finite or out-of-range
//! value accepted. fuzz/ holds the same targets for a long cargo-fuzz run.

use proptest::prelude::*;
use vmscale::import;
use vmscale::import::samplefile;

/// Text that looks like what the parsers read: table headers, numbers in
/// every spelling (NaN, inf, exponents, signs, `s` suffixes, run-together),
/// mail quoting, separators and line breaks.
fn tableish() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("Gb".to_string()),
        Just("Mb".to_string()),
        Just("Rep".to_string()),
        Just("Thr".to_string()),
        Just("Threads".to_string()),
        Just("CLine".to_string()),
        Just("User".to_string()),
        Just("System".to_string()),
        Just("Wall".to_string()),
        Just("flt/cpu/s".to_string()),
        Just("fault/wsec".to_string()),
        Just("tasks,processes,processes_idle,threads,threads_idle,linear".to_string()),
        Just(">".to_string()),
        Just("> >".to_string()),
        Just("\n".to_string()),
        Just(",".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        Just("1e30".to_string()),
        Just("1e400".to_string()),
        Just("-0".to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        (0u32..100_000).prop_map(|v| v.to_string()),
        (0.0f64..1e6).prop_map(|v| format!("{v:.2}s")),
        (0.0f64..1e6, 0.0f64..1e7).prop_map(|(a, b)| format!("{a:.3}{b:.3}")),
        "[a-z/.]{1,8}",
        // Multi-byte characters inside number-like words.
        "[0-9.s\u{e9}\u{fffd}]{1,16}",
    ];
    prop::collection::vec(word, 0..120).prop_map(|w| w.join(" "))
}

/// The robot reports written for the tests, one of them picked.
fn robot_report() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(include_str!("fixtures/reproduce/vms-anon-w-seq.txt")),
        Just(include_str!("fixtures/reproduce/wis-thread-quoted.txt")),
        Just(include_str!("fixtures/reproduce/wis-process.txt")),
        Just(include_str!("fixtures/reproduce/pft.txt")),
        Just(include_str!("fixtures/reproduce/pft-qp.eml")),
        Just(include_str!("fixtures/reproduce/will-it-scale.job.yaml")),
    ]
}

/// Every row a read report holds is finite.
fn rows_finite(r: &vmscale::reproduce::Report) -> bool {
    use vmscale::reproduce::report::Delta;
    r.tests.iter().flat_map(|t| &t.rows).all(|row| {
        row.base.is_finite()
            && row.head.is_finite()
            && match row.change {
                Some(Delta::Percent(v) | Delta::Absolute(v)) => v.is_finite(),
                None => true,
            }
    })
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn all_finite(tables: &[import::Table]) -> bool {
    tables.iter().all(|t| {
        t.rows.iter().all(|(case, d)| {
            case.tasks >= 1
                && case.tasks <= vmscale::limits::MAX_TASKS
                && d.figures.values().all(|v| v.is_finite() && *v >= 0.0)
        })
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn importers_never_panic_nor_accept_non_finite(text in tableish()) {
        for skip in [false, true] {
            let opts = import::Options { skip_bad_rows: skip };
            if let Ok(tables) = import::parse(&text, "t", &opts, &mut Vec::new()) {
                prop_assert!(all_finite(&tables), "{text}");
            }
        }
    }

    #[test]
    fn importers_survive_any_text(text in any::<String>()) {
        let _ = import::parse(&text, "t", &import::Options::default(), &mut Vec::new());
    }

    #[test]
    fn robot_reports_cut_and_mangled_never_panic(
        seed in robot_report(),
        cut in 0usize..30_000,
        at in 0usize..30_000,
        junk in prop_oneof![tableish(), any::<String>()],
        quote in prop_oneof![Just(""), Just("> "), Just(">>"), Just("> > ")],
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let cut = seed.len().min(cut);
        let at = seed.len().min(at);
        let mut text: Vec<u8> = Vec::new();
        for line in seed.as_bytes()[..cut].split(|b| *b == b'\n') {
            text.extend_from_slice(quote.as_bytes());
            text.extend_from_slice(line);
            text.push(b'\n');
        }
        let mut spliced = seed.as_bytes()[..at].to_vec();
        spliced.extend_from_slice(junk.as_bytes());
        spliced.extend_from_slice(&bytes);
        spliced.extend_from_slice(&seed.as_bytes()[at..]);
        for t in [text, spliced] {
            if let Ok(r) = vmscale::reproduce::read_bytes(&t) {
                prop_assert!(!r.tests.is_empty() && rows_finite(&r));
            }
        }
    }

    #[test]
    fn robot_reader_survives_any_text(text in tableish(), bytes in any::<Vec<u8>>()) {
        for t in [text.as_bytes(), &bytes] {
            if let Ok(r) = vmscale::reproduce::read_bytes(t) {
                prop_assert!(rows_finite(&r));
            }
        }
    }

    #[test]
    fn sample_files_hold_finite_values(text in tableish(), column in proptest::option::of("[a-z0-9]{1,3}")) {
        if let Ok(v) = samplefile::parse("f", &text, column.as_deref()) {
            prop_assert!(v.values.iter().all(|x| x.is_finite()), "{text}");
        }
        let _ = samplefile::parse("f", &text.replace(' ', ","), None);
        let _ = samplefile::parse("f", &format!("[{}]", text.replace(' ', ",")), None);
    }

    #[test]
    fn fit_pairs_are_in_range(text in tableish()) {
        if let Ok(pairs) = vmscale::stats::usl::parse_pairs(&text) {
            for (n, x) in pairs {
                prop_assert!((1.0..=vmscale::stats::usl::MAX_N).contains(&n) && x.is_finite());
            }
        }
    }

    #[test]
    fn option_parsers_stay_in_range(
        num in prop_oneof![any::<f64>().prop_map(|v| v.to_string()), "[0-9.e+-]{0,12}"],
        unit in prop_oneof![Just(""), Just("K"), Just("M"), Just("G"), Just("T"), Just("ms"),
                            Just("s"), Just("m"), Just("h"), Just("%"), Just("x")],
        list in "[0-9,\\- a-z]{0,16}",
        online in 1usize..512,
    ) {
        let text = format!("{num}{unit}");
        if let Ok(b) = vmscale::parse::size(&text) {
            prop_assert!(b >= 1);
        }
        if let Ok(d) = vmscale::parse::duration(&text) {
            prop_assert!(d.as_secs_f64() > 0.0 && d.as_secs_f64() < 1e9);
        }
        if let Ok(p) = vmscale::parse::percent(&text) {
            prop_assert!(p > 0.0 && p < 1.0);
        }
        if let Ok(t) = vmscale::parse::tasks(&list, online) {
            prop_assert!(t.iter().all(|&n| (1..=vmscale::limits::MAX_TASKS).contains(&n)));
        }
    }
}
