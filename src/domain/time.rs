//! Timestamps as RFC 3339 strings in UTC, the form every surface prints and stores.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The current time as an RFC 3339 string with millisecond precision, in UTC.
pub fn now_rfc3339() -> String {
    format_rfc3339(OffsetDateTime::now_utc())
}

/// Formats an instant as RFC 3339 in UTC with exactly three fraction digits, so
/// stored timestamps sort as text in time order (`.120Z` before `.123Z`; the plain
/// RFC 3339 formatter would write `.12Z`, which sorts after).
pub fn format_rfc3339(t: OffsetDateTime) -> String {
    const FORMAT: &[time::format_description::BorrowedFormatItem<'_>] = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    let utc = t.to_offset(time::UtcOffset::UTC);
    utc.format(FORMAT)
        .unwrap_or_else(|_| utc.format(&Rfc3339).unwrap_or_else(|_| utc.to_string()))
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

    #[test]
    fn fractions_have_three_digits_so_text_order_is_time_order() {
        let at = |ms: i64| {
            format_rfc3339(
                OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
                    .expect("in range"),
            )
        };
        assert_eq!(at(1_700_000_000_120), "2023-11-14T22:13:20.120Z");
        assert_eq!(at(1_700_000_000_000), "2023-11-14T22:13:20.000Z");
        assert!(at(1_700_000_000_120) < at(1_700_000_000_123));
        let offset =
            OffsetDateTime::parse("2026-01-01T02:00:00.5+02:00", &Rfc3339).expect("parses");
        assert_eq!(format_rfc3339(offset), "2026-01-01T00:00:00.500Z");
    }
}
