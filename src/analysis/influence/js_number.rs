//! Writing a number the way JavaScript's `String(x)` does (ECMA-262 Number::toString), for the
//! strategy names of influence.md §5 (`margin>=0.05`, `margin>=1e-7`, `margin>=Infinity`).

/// Largest decimal exponent (position of the point) written without an exponent.
const MAX_PLAIN_POINT: i32 = 21;
/// Smallest decimal exponent written without an exponent (`0.000001` is plain, `1e-7` is not).
const MIN_PLAIN_POINT: i32 = -5;

/// `x` as JavaScript writes it: shortest round-trip digits; plain decimal for
/// 1e-6 ≤ |x| < 1e21, otherwise exponent form (`1e-7`, `1.5e+21`); `NaN`, `Infinity`,
/// `-Infinity`; `-0` as `0`; `1` not `1.0`.
pub fn js_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest digits that round-trip, e.g. "1.5e-7" or "1e21".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let n = exp + 1; // the decimal point sits after n digits
    let body = if k <= n && n <= MAX_PLAIN_POINT {
        format!(
            "{digits}{}",
            "0".repeat(usize::try_from(n - k).unwrap_or(0))
        )
    } else if 0 < n && n <= MAX_PLAIN_POINT {
        let cut = usize::try_from(n).unwrap_or(0);
        format!("{}.{}", &digits[..cut], &digits[cut..])
    } else if (MIN_PLAIN_POINT..=0).contains(&n) {
        format!("0.{}{digits}", "0".repeat(usize::try_from(-n).unwrap_or(0)))
    } else {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let e = n - 1;
        format!(
            "{first}{frac}e{}{}",
            if e >= 0 { "+" } else { "-" },
            e.abs()
        )
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_like_javascript_at_the_edges() {
        assert_eq!(js_number(-1e-7), "-1e-7");
        assert_eq!(js_number(123456789012345680000.0), "123456789012345680000");
        assert_eq!(js_number(1.5e300), "1.5e+300");
        assert_eq!(js_number(5e-324), "5e-324");
        assert_eq!(js_number(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(js_number(f64::NAN), "NaN");
        assert_eq!(js_number(-2.5), "-2.5");
    }
}
