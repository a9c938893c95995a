//! Counts as people read them: `100,000`, not `100000`; durations and dollars likewise.
//!
//! One function for every layer (the report's sentences, experiment plans, the progress bar and
//! the screen), so a count reads the same wherever it is shown.

/// `n` with its thousands separated by commas: `1234567` becomes `1,234,567`.
pub fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` grouped with its noun in the number it takes: `1 step`, `2 steps`, `1,000 steps` (issue
/// 26: "1 steps" read as a slip).
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", group(n), if n == 1 { one } else { many })
}

/// A duration as people read it: `850ms`, `1.2s`, `3m04s`, `2h05m`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{}.{}s", ms / 1000, (ms % 1000) / 100)
    } else if ms < 3_600_000 {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    } else {
        format!("{}h{:02}m", ms / 3_600_000, (ms % 3_600_000) / 60_000)
    }
}

/// A large count in a few characters, as token counts are shown: `950`, `1.8k`, `12k`, `3.4M`.
pub fn short_count(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{}.{}k", n / 1000, (n % 1000) / 100)
    } else if n < 1_000_000 {
        format!("{}k", n / 1000)
    } else {
        format!("{}.{}M", n / 1_000_000, (n % 1_000_000) / 100_000)
    }
}

/// A step's duration (milliseconds, negative when its clock ran backwards) as [`duration`]
/// writes it; a negative one reads `0ms`.
pub fn step_duration(ms: i64) -> String {
    duration(u64::try_from(ms).unwrap_or(0))
}

/// Dollars as people read them: `$1.23`, and under a cent with its first significant digits
/// (`$0.0045`), so a cheap call does not read `$0.00`.
pub fn dollars(usd: f64) -> String {
    if !usd.is_finite() || usd <= 0.0 {
        return "$0".to_owned();
    }
    if usd >= 0.01 {
        return format!("${usd:.2}");
    }
    // Two significant digits below a cent.
    let (mut digits, mut x) = (2usize, usd * 100.0);
    while x < 1.0 && digits < 12 {
        x *= 10.0;
        digits += 1;
    }
    let digits = digits + 1;
    format!("${usd:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::{counted, dollars, duration, group};

    #[test]
    fn durations_and_dollars_read_naturally() {
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(1250), "1.2s");
        assert_eq!(duration(184_000), "3m04s");
        assert_eq!(duration(7_500_000), "2h05m");
        assert_eq!(dollars(1.234), "$1.23");
        assert_eq!(dollars(0.0045), "$0.0045");
        assert_eq!(dollars(0.012), "$0.01");
        assert_eq!(dollars(0.0), "$0");
    }

    #[test]
    fn a_count_takes_its_noun_in_the_singular_only_for_one() {
        assert_eq!(counted(1, "step", "steps"), "1 step");
        assert_eq!(counted(0, "step", "steps"), "0 steps");
        assert_eq!(counted(1000, "item", "items"), "1,000 items");
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(38_849), "38,849");
        assert_eq!(group(100_000), "100,000");
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group(usize::MAX).replace(',', ""), usize::MAX.to_string());
    }
}
