//! Times as span formats write them: RFC 3339 / ISO 8601 instants (with `T` or a space, with or
//! without an offset; none means UTC, as the ClickHouse exporter and Python's `isoformat()` write
//! them), and ISO 8601 durations (`PT1M48.75533S`). Pure; `None` for anything else.

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

/// Unix nanoseconds of an ISO 8601 instant; `None` before 1970 or for anything else.
pub fn iso_ns(s: &str) -> Option<u64> {
    let t = s.trim();
    let parsed = OffsetDateTime::parse(t, &Rfc3339).ok().or_else(|| {
        // No offset: taken as UTC. A space may stand for the `T`.
        let fixed = t.replacen(' ', "T", 1);
        let with_z = format!("{fixed}Z");
        OffsetDateTime::parse(&with_z, &Rfc3339).ok().or_else(|| {
            let fmt = time::format_description::well_known::Iso8601::DEFAULT;
            PrimitiveDateTime::parse(&fixed, &fmt)
                .ok()
                .map(|p| p.assume_offset(UtcOffset::UTC))
        })
    })?;
    u64::try_from(parsed.unix_timestamp_nanos()).ok()
}

/// Nanoseconds of an ISO 8601 duration: `PT1M48.75533S`, `PT0.000052S`, `P1DT2H`; weeks and days
/// count as 7 and 1 times 24 hours. Years and months (no fixed length) are refused.
pub fn iso_duration_ns(s: &str) -> Option<u64> {
    let rest = s.trim().strip_prefix('P')?;
    let mut total: f64 = 0.0;
    let mut in_time = false;
    let mut number = String::new();
    let mut any = false;
    for c in rest.chars() {
        match c {
            'T' if !in_time && number.is_empty() => in_time = true,
            '0'..='9' | '.' | ',' => number.push(if c == ',' { '.' } else { c }),
            unit => {
                let n: f64 = number.parse().ok()?;
                number.clear();
                let seconds = match (in_time, unit) {
                    (false, 'W') => 7.0 * 86_400.0,
                    (false, 'D') => 86_400.0,
                    (true, 'H') => 3_600.0,
                    (true, 'M') => 60.0,
                    (true, 'S') => 1.0,
                    _ => return None,
                };
                total += n * seconds;
                any = true;
            }
        }
    }
    if !number.is_empty() || !any || !(0.0..=1.0e10).contains(&total) {
        return None;
    }
    Some((total * 1.0e9).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_with_and_without_offsets_agree() {
        let z = iso_ns("2025-03-19T16:49:39.285437Z");
        assert_eq!(z, Some(1_742_402_979_285_437_000));
        assert_eq!(iso_ns("2025-03-19T16:49:39.285437"), z);
        assert_eq!(iso_ns("2025-03-19 16:49:39.285437"), z);
        assert_eq!(iso_ns("2025-03-19T17:49:39.285437+01:00"), z);
        assert_eq!(iso_ns("yesterday"), None);
        assert_eq!(iso_ns("1960-01-01T00:00:00Z"), None);
    }

    #[test]
    fn durations_read_minutes_seconds_and_days() {
        assert_eq!(iso_duration_ns("PT1M48.75533S"), Some(108_755_330_000));
        assert_eq!(iso_duration_ns("PT0.000052S"), Some(52_000));
        assert_eq!(iso_duration_ns("P1DT2H"), Some(93_600_000_000_000));
        assert_eq!(iso_duration_ns("P1Y"), None);
        assert_eq!(iso_duration_ns("PT"), None);
        assert_eq!(iso_duration_ns("1.5"), None);
    }
}
