//! Timestamps as RFC 3339 strings in UTC, the form every surface prints and stores.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The current time as an RFC 3339 string with millisecond precision, in UTC.
pub fn now_rfc3339() -> String {
    format_rfc3339(OffsetDateTime::now_utc())
}

/// Formats a UTC instant as RFC 3339 with millisecond precision.
pub fn format_rfc3339(t: OffsetDateTime) -> String {
    let t = t
        .replace_nanosecond(t.millisecond() as u32 * 1_000_000)
        .unwrap_or(t);
    t.format(&Rfc3339).unwrap_or_else(|_| t.to_string())
}

/// The current time in milliseconds since the Unix epoch.
pub fn now_millis() -> i64 {
    (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

/// Parses an RFC 3339 string into milliseconds since the Unix epoch.
pub fn parse_millis(s: &str) -> Option<i64> {
    OffsetDateTime::parse(s, &Rfc3339)
        .ok()
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_millis() {
        let s = now_rfc3339();
        let ms = parse_millis(&s).expect("parses");
        assert!((now_millis() - ms).abs() < 5_000);
        assert!(s.ends_with('Z'));
    }
}
