//! UTC timestamps as RFC 3339 text with milliseconds, formatted by jiff.

use jiff::Timestamp;

/// The one format: "2026-11-22T10:04:05.123Z".
const RFC3339_MILLIS: &str = "%Y-%m-%dT%H:%M:%S%.3fZ";

/// Now, e.g. "2026-11-22T10:04:05.123Z".
pub fn now() -> String {
    format(Timestamp::now())
}

/// A timestamp in UTC, its fraction cut to milliseconds.
pub fn format(t: Timestamp) -> String {
    t.strftime(RFC3339_MILLIS).to_string()
}

/// Seconds since the epoch and milliseconds after them (proleptic
/// Gregorian, UTC); `None` outside the years -9999 to 9999 or for more
/// than 999 milliseconds.
pub fn format_unix(secs: i64, millis: u32) -> Option<String> {
    if millis > 999 {
        return None;
    }
    let t = Timestamp::from_second(secs)
        .ok()?
        .checked_add(jiff::SignedDuration::from_millis(millis.into()))
        .ok()?;
    Some(format(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        let at = |s, ms| format_unix(s, ms).unwrap();
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(1_795_000_000, 5), "2026-11-18T11:06:40.005Z");
        assert_eq!(at(951_782_400, 0), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(-1, 999), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn out_of_range_is_none() {
        assert_eq!(format_unix(i64::MAX, 0), None);
        assert_eq!(format_unix(0, 1000), None);
    }

    #[test]
    fn fractions_are_cut_to_milliseconds() {
        let t = Timestamp::new(1_795_000_000, 5_999_999).unwrap();
        assert_eq!(format(t), "2026-11-18T11:06:40.005Z");
    }

    #[test]
    fn now_is_read_back_by_jiff() {
        let text = now();
        let t: Timestamp = text.parse().unwrap();
        assert_eq!(format(t), text);
    }
}
