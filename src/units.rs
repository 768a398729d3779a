//! Sizes and times as people read them, the one place their units are
//! chosen: exact sizes for what an option asked for ("256 MiB"), rounded
//! sizes for what a machine has ("15.6 GiB"), durations from milliseconds
//! to hours ("0.012 s", "12.0 min"), signed changes ("+1.5", "-0.3").

const KIB: f64 = 1024.0;
const GIB: u64 = 1 << 30;

/// Bytes with a binary unit, exact where the value is a whole number of
/// its unit ("256 MiB", "4 KiB"), else with two decimals ("1.50 GiB").
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= KIB && u < UNITS.len() - 1 {
        v /= KIB;
        u += 1;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as u64, UNITS[u])
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// Bytes of memory rounded to one decimal: GiB from 1 GiB up, MiB below
/// ("15.6 GiB", "512.0 MiB").
pub fn memory(bytes: u64) -> String {
    if bytes >= GIB {
        format!("{:.1} GiB", bytes as f64 / GIB as f64)
    } else {
        format!("{:.1} MiB", bytes as f64 / (KIB * KIB))
    }
}

/// [`memory`] of a count of KiB, as /proc and sysfs give it.
pub fn memory_kib(kib: u64) -> String {
    memory(kib.saturating_mul(1024))
}

/// Seconds as "0.012 s", "3.4 s", "12.0 min", "3.2 h".
pub fn duration(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.3} s")
    } else if s < 100.0 {
        format!("{s:.1} s")
    } else if s < 6000.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// A change with its sign and one decimal ("+1.5", "-21.4"); one that
/// rounds to zero is "+0.0", never "-0.0".
pub fn signed(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    // -0.0 + 0.0 is +0.0: a tiny negative change reads as no change.
    format!("{:+.1}", r + 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_that_rounds_to_zero_has_no_minus() {
        assert_eq!(signed(-0.00001), "+0.0");
        assert_eq!(signed(-0.0), "+0.0");
        assert_eq!(signed(-0.06), "-0.1");
        assert_eq!(signed(21.44), "+21.4");
        assert_eq!(signed(-21.46), "-21.5");
    }

    #[test]
    fn exact_sizes_keep_whole_units() {
        assert_eq!(size(256 << 20), "256 MiB");
        assert_eq!(size(3 << 29), "1.50 GiB");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(100), "100 B");
    }

    #[test]
    fn memory_is_rounded_to_one_decimal_in_mib_or_gib() {
        assert_eq!(memory_kib(16 << 20), "16.0 GiB");
        assert_eq!(memory_kib(512 << 10), "512.0 MiB");
        assert_eq!(memory(GIB - 1), "1024.0 MiB");
        assert_eq!(memory(GIB), "1.0 GiB");
        assert_eq!(memory(3 << 29), "1.5 GiB");
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(0.0123), "0.012 s");
        assert_eq!(duration(3.44), "3.4 s");
        assert_eq!(duration(720.0), "12.0 min");
        assert_eq!(duration(36_000.0), "10.0 h");
    }
}
