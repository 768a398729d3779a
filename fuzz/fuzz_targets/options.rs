//! The size, duration, percent and task-list parsers on any text: no panic,
//! every accepted value in range.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(b) = vmscale::parse::size(&text) {
        assert!(b >= 1);
    }
    if let Ok(d) = vmscale::parse::duration(&text) {
        assert!(d.as_secs_f64() > 0.0 && d.as_secs_f64() < 1e9);
    }
    if let Ok(p) = vmscale::parse::percent(&text) {
        assert!(p > 0.0 && p < 1.0);
    }
    if let Ok(t) = vmscale::parse::tasks(&text, 64) {
        assert!(
            t.iter()
                .all(|&n| (1..=vmscale::limits::MAX_TASKS).contains(&n))
        );
    }
});
