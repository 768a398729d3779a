//! Sample files (numbers a line, CSV, JSON) and `fit`'s `N X` pairs on any
//! text: no panic, every accepted value finite and in range.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(v) = vmscale::commands::samplefile::parse("fuzz", &text, None) {
        assert!(v.values.iter().all(|x| x.is_finite()));
    }
    let _ = vmscale::commands::samplefile::parse("fuzz", &text, Some("2"));
    if let Ok(pairs) = vmscale::stats::usl::parse_pairs(&text) {
        for (n, x) in pairs {
            assert!((1.0..=vmscale::stats::usl::MAX_N).contains(&n) && x.is_finite());
        }
    }
});
