//! The importers (pft tables, will-it-scale CSV) on any text: no panic, and
//! every accepted value finite, non-negative, task counts in range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmscale::import;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for skip in [false, true] {
        let opts = import::Options {
            skip_bad_rows: skip,
        };
        if let Ok(tables) = import::parse(&text, "fuzz", &opts, &mut Vec::new()) {
            for t in &tables {
                for (case, d) in &t.rows {
                    assert!((1..=vmscale::limits::MAX_TASKS).contains(&case.tasks));
                    assert!(d.figures.values().all(|v| v.is_finite() && *v >= 0.0));
                }
            }
        }
    }
});
