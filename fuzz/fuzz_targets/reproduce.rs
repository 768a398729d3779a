//! `vmscale reproduce`'s reader (robot mails and lkp job.yaml) on any
//! bytes: no panic, and every row it accepts finite.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmscale::reproduce::report::Delta;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = vmscale::reproduce::read_bytes(data) {
        assert!(!r.tests.is_empty());
        for t in &r.tests {
            for row in &t.rows {
                assert!(row.base.is_finite() && row.head.is_finite());
                if let Some(Delta::Percent(v) | Delta::Absolute(v)) = row.change {
                    assert!(v.is_finite());
                }
            }
        }
    }
});
