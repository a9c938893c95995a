//! Counts as people read them: `100,000`, not `100000`.
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

#[cfg(test)]
mod tests {
    use super::{counted, group};

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
