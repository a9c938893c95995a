//! `started_at` / `ended_at`: RFC 3339 text or Unix milliseconds.

use crate::analysis::model::Timestamp;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Parses a timestamp; `None` for anything else (the caller warns).
pub fn parse(v: &Value) -> Option<Timestamp> {
    match v {
        Value::String(s) => {
            let t = OffsetDateTime::parse(s.trim(), &Rfc3339).ok()?;
            let ms = t.unix_timestamp_nanos() / 1_000_000;
            i64::try_from(ms).ok().map(Timestamp)
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(Timestamp(i))
            } else {
                let f = n.as_f64()?;
                // Beyond ±2^53 ms (~285,000 years) a float is no meaningful time.
                (f.is_finite() && f.abs() < 9.0e15).then(|| Timestamp(f.round() as i64))
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc3339_and_milliseconds_agree() {
        let a = parse(&json!("2026-01-02T03:04:05.250Z")).unwrap();
        let b = parse(&json!(1767323045250i64)).unwrap();
        assert_eq!(a, b);
        assert_eq!(parse(&json!("2026-01-02T04:04:05.250+01:00")), Some(a));
    }

    #[test]
    fn junk_is_not_a_time() {
        assert_eq!(parse(&json!("yesterday")), None);
        assert_eq!(parse(&json!(1e300)), None);
        assert_eq!(parse(&json!(true)), None);
    }
}
